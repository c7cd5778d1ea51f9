package main

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// requestKind is what the API proxy makes of a request of a replica.
type requestKind int

const (
	// passThrough requests are forwarded unchanged.
	passThrough requestKind = iota
	// podCreate is POST /api/v1/namespaces/{ns}/pods: it may be faulted.
	podCreate
	// podWatch is GET /api/v1/[namespaces/{ns}/]pods?watch=true: it lags during a slow spell.
	podWatch
	// groupStatusWrite is PUT or PATCH .../oaatgroups/{name}/status: the pause fault waits for
	// one that writes a new run's intent.
	groupStatusWrite
	// leaseWrite is POST .../leases or PUT .../leases/{leaseName}: the leader election's.
	leaseWrite
)

// classify sorts a request by its method and path. Subresources of pods (binding, eviction,
// status) are not pod creations.
func classify(r *http.Request) requestKind {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case isPodCollection(parts) && r.Method == http.MethodPost:
		return podCreate
	case isPodCollection(parts) && r.Method == http.MethodGet && r.URL.Query().Get("watch") == "true":
		return podWatch
	case (r.Method == http.MethodPut || r.Method == http.MethodPatch) && isGroupStatus(parts):
		return groupStatusWrite
	case isLease(parts, r.Method):
		return leaseWrite
	}
	return passThrough
}

// isPodCollection matches api/v1/pods and api/v1/namespaces/{ns}/pods.
func isPodCollection(parts []string) bool {
	switch len(parts) {
	case 3:
		return parts[0] == "api" && parts[1] == "v1" && parts[2] == "pods"
	case 5:
		return parts[0] == "api" && parts[1] == "v1" && parts[2] == "namespaces" && parts[4] == "pods"
	}
	return false
}

// isGroupStatus matches apis/oaat.io/{version}/namespaces/{ns}/oaatgroups/{name}/status.
func isGroupStatus(parts []string) bool {
	return len(parts) == 8 && parts[0] == "apis" && parts[1] == v1alpha1.GroupVersion.Group &&
		parts[3] == "namespaces" && parts[5] == "oaatgroups" && parts[7] == "status"
}

// isLease matches POST apis/coordination.k8s.io/v1/namespaces/{ns}/leases and PUT on
// .../leases/{leaseName}.
func isLease(parts []string, method string) bool {
	if len(parts) < 6 || parts[0] != "apis" || parts[1] != "coordination.k8s.io" || parts[3] != "namespaces" || parts[5] != "leases" {
		return false
	}
	return (len(parts) == 6 && method == http.MethodPost) || (len(parts) == 7 && parts[6] == leaseName && method == http.MethodPut)
}

// createFault is what the proxy does to a pod creation. Every fault forwards the request and
// waits for the API server's answer first, so the pod exists (when the API server created it) but
// the replica cannot tell.
type createFault int

const (
	noFault createFault = iota
	// faultTimeout answers 504 Gateway Timeout with a Status of reason Timeout, as an API server
	// does when a request outlives its deadline, and as a load balancer would.
	faultTimeout
	// faultReset aborts the response: the replica sees its stream or connection reset.
	faultReset
	// faultSlow delivers the API server's answer, late.
	faultSlow
)

func (f createFault) String() string {
	return [...]string{"none", "504 after forwarding", "reset after forwarding", "answered late"}[f]
}

// faultPicker decides which pod creations to fault: each one with probability rate, the kind
// evenly among timeout, reset and slow. Safe for concurrent use.
type faultPicker struct {
	rate float64
	mu   sync.Mutex
	rng  *rand.Rand
}

func (p *faultPicker) pick() createFault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rate <= 0 || p.rng.Float64() >= p.rate {
		return noFault
	}
	return createFault(1 + p.rng.IntN(3))
}

// stop ends the faults: the settle window after the faults runs without them.
func (p *faultPicker) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = 0
}

// lateBy returns how long a slow answer is held: 1 to 4 s.
func (p *faultPicker) lateBy() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Second + time.Duration(p.rng.Int64N(int64(3*time.Second)))
}

// freshIntent reports whether a group status, as the API server answered a status write with it,
// holds the intent of a run decided within the last few seconds before now: the write that a
// pod's creation follows. It returns the group and the pod.
func freshIntent(body []byte, now time.Time) (group, pod string, ok bool) {
	var g v1alpha1.OaatGroup
	if err := json.Unmarshal(body, &g); err != nil {
		return "", "", false
	}
	cr := g.Status.CurrentRun
	// startedAt has whole seconds and comes from the replica's clock, this machine's.
	if cr == nil || now.Sub(cr.StartedAt.Time) > freshness {
		return "", "", false
	}
	return g.Name, cr.PodName, true
}

// freshness bounds how old a run's startedAt may be for its status write to be its intent's.
const freshness = 3 * time.Second
