package main

import (
	"context"
	"net/url"
	"os"
	"strings"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/controllers"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/notify"
)

// notifyOptions reads the flags of the notifications: the cluster-wide sink and the prefixes a
// group's sink may start with. The sink's token is read from the operator's namespace: namespace
// (--leader-election-namespace, for a manager run outside the cluster), else the one it runs in.
func notifyOptions(sink, prefixes, namespace string, m *metrics.NotifyMetrics, reader client.Reader, log logr.Logger) controllers.NotifyOptions {
	opts := controllers.NotifyOptions{Metrics: m}
	for _, p := range strings.Split(prefixes, ",") {
		if p = strings.TrimSpace(p); p != "" {
			opts.GroupSinkPrefixes = append(opts.GroupSinkPrefixes, p)
		}
	}
	var token func(context.Context) (string, error)
	if sink != "" {
		if u, err := url.Parse(sink); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			log.Error(err, "--notify-sink must be an absolute http or https URL", "sink", sink)
			os.Exit(1)
		}
		opts.Sink = &notify.Sink{URL: sink, Scope: notify.ScopeCluster}
		if namespace == "" {
			ns, err := leader.InClusterNamespace()
			if err != nil {
				log.Error(err, "Cannot find the operator's namespace, where the sink's token is read from: give --leader-election-namespace")
				os.Exit(1)
			}
			namespace = ns
		}
		token = notify.NewSecretToken(reader, client.ObjectKey{Namespace: namespace, Name: v1alpha1.NotifyTokenSecret}).Get
	}
	if opts.Sink != nil || len(opts.GroupSinkPrefixes) > 0 {
		opts.Send = notify.HTTPSender(token)
	}
	return opts
}
