package support

import (
	"context"
	"net"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadyEndpoints returns the ready address:port pairs of a Service's EndpointSlices: what a
// Prometheus with Kubernetes service discovery (role endpoints, as a ServiceMonitor makes it)
// scrapes, each replica behind the Service on its own.
func ReadyEndpoints(ctx context.Context, c client.Reader, namespace, service string) ([]string, error) {
	slices := &discoveryv1.EndpointSliceList{}
	if err := c.List(ctx, slices, client.InNamespace(namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return nil, err
	}
	var endpoints []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready {
				continue
			}
			for _, port := range s.Ports {
				for _, addr := range e.Addresses {
					endpoints = append(endpoints, net.JoinHostPort(addr, strconv.Itoa(int(*port.Port))))
				}
			}
		}
	}
	return endpoints, nil
}
