package perfkit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// RequestKey is what apiserver_request_total tells requests apart by, with the response code
// reduced to whether the request failed.
type RequestKey struct {
	Verb, Group, Resource, Subresource string
	// Failed says the API server answered 4xx or 5xx.
	Failed bool
}

// String is resource[/subresource] VERB, the resource qualified by its API group if it has one,
// and "failed" for failed requests.
func (k RequestKey) String() string {
	r := k.Resource
	if k.Group != "" {
		r += "." + k.Group
	}
	if k.Subresource != "" {
		r += "/" + k.Subresource
	}
	if k.Failed {
		return r + " " + k.Verb + " failed"
	}
	return r + " " + k.Verb
}

// Write reports whether the request changes state.
func (k RequestKey) Write() bool {
	switch k.Verb {
	case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
		return true
	}
	return false
}

// Requests counts the API server's requests by RequestKey.
type Requests map[RequestKey]float64

// APIRequests scrapes apiserver_request_total from the API server.
func APIRequests(ctx context.Context, clientset kubernetes.Interface) (Requests, error) {
	samples, err := ScrapeAPIServer(ctx, clientset)
	if err != nil {
		return nil, err
	}
	r := Requests{}
	for _, s := range samples {
		if s.Name != "apiserver_request_total" {
			continue
		}
		r[RequestKey{Verb: s.Labels["verb"], Group: s.Labels["group"], Resource: s.Labels["resource"],
			Subresource: s.Labels["subresource"], Failed: s.Labels["code"] >= "400"}] += s.Value
	}
	return r, nil
}

// Since returns the requests made since before was read.
func (r Requests) Since(before Requests) Requests {
	d := Requests{}
	for k, v := range r {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// Count adds the requests whose key keep accepts.
func (r Requests) Count(keep func(RequestKey) bool) float64 {
	var n float64
	for k, v := range r {
		if keep(k) {
			n += v
		}
	}
	return n
}

// Get counts the successful requests of one resource, subresource and verb, in any API group.
func (r Requests) Get(resource, subresource, verb string) float64 {
	return r.Count(func(k RequestKey) bool {
		return k.Resource == resource && k.Subresource == subresource && k.Verb == verb && !k.Failed
	})
}

// Background reports the writes that the cluster makes whatever runs on it: the fake Nodes'
// heartbeats, the Leases of nodes and components, and the tokens the controller-manager's
// controllers renew.
func Background(k RequestKey) bool {
	return k.Resource == "nodes" || k.Resource == "leases" || (k.Resource == "serviceaccounts" && k.Subresource == "token")
}

// WorkloadWrites reports the successful writes that a workload causes: every one but the
// background's.
func WorkloadWrites(k RequestKey) bool { return k.Write() && !k.Failed && !Background(k) }

// FailedWrites reports the failed writes but the background's.
func FailedWrites(k RequestKey) bool { return k.Write() && k.Failed && !Background(k) }

// WriteTable lists the requests of r that keep accepts, most first, one a line with their count
// and their count per run, for the report.
func (r Requests) WriteTable(keep func(RequestKey) bool, runs int) []string {
	type row struct {
		key RequestKey
		n   float64
	}
	var rows []row
	for k, v := range r {
		if keep(k) {
			rows = append(rows, row{k, v})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].n != rows[j].n {
			return rows[i].n > rows[j].n
		}
		return rows[i].key.String() < rows[j].key.String()
	})
	lines := make([]string, 0, len(rows))
	for _, rw := range rows {
		lines = append(lines, fmt.Sprintf("%8.0f  %5.2f/run  %s", rw.n, PerRun(rw.n, runs), rw.key))
	}
	return lines
}

// PerRun divides n by runs, 0 when there were none.
func PerRun(n float64, runs int) float64 {
	if runs == 0 {
		return 0
	}
	return n / float64(runs)
}

// Indent prefixes each line.
func Indent(prefix string, lines []string) string {
	return prefix + strings.Join(lines, "\n"+prefix)
}
