package main

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Actions of a replica that leaseHolder checks.
const (
	actCreate = "created a pod"
	actStatus = "wrote a group's status"
)

// leaseHolder follows which replica holds the leader election Lease, from the replicas' own
// Lease writes as they pass the proxy: the API server accepts them one at a time (optimistic
// concurrency), so the last accepted one names the holder. A replica acted as a deposed leader
// when its write reached the proxy after the API server had accepted another replica's take-over
// (or its own release), since the API server then handled it under the new holder.
type leaseHolder struct {
	mu      sync.Mutex
	replica string    // the holder; empty after a release
	since   time.Time // when its write was accepted; zero before the first
	// deposed counts, per action, what replicas did while another held the Lease.
	deposed  map[string]int
	examples []string
}

// took records that the API server accepted replica's Lease write at at, holderIdentity naming
// it (holds) or nobody (a release).
func (h *leaseHolder) took(replica string, holds bool, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !holds {
		replica = ""
	}
	if replica != h.replica || h.since.IsZero() {
		h.replica, h.since = replica, at
	}
}

// acted records that the API server accepted a write of replica's that reached the proxy at sent;
// it counts the write if another replica (or nobody) held the Lease by then.
func (h *leaseHolder) acted(replica string, sent time.Time, action string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since.IsZero() || h.replica == replica || !h.since.Before(sent) {
		return
	}
	if h.deposed == nil {
		h.deposed = map[string]int{}
	}
	h.deposed[action]++
	if len(h.examples) < 5 {
		holder := h.replica
		if holder == "" {
			holder = "nobody"
		}
		h.examples = append(h.examples, fmt.Sprintf("%s %s at %s, %s after %s took the Lease",
			replica, action, sent.Format("15:04:05.000"), sent.Sub(h.since).Round(time.Millisecond), holder))
	}
}

// counts returns how many times replicas did action while deposed, and examples of any action.
func (h *leaseHolder) counts(action string) (int, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deposed[action], append([]string(nil), h.examples...)
}

// leaseWritten feeds an accepted Lease write of replica to the holder.
func (p *apiProxy) leaseWritten(replica string, resp *http.Response) error {
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil
	}
	body, err := peekBody(resp)
	if err != nil {
		return err
	}
	// client-go asks for protobuf for built-in types; the scheme's codecs read it and JSON.
	obj, _, err := clientgoscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	lease, ok := obj.(*coordinationv1.Lease)
	if err != nil || !ok {
		p.errLog.Printf("%s: a Lease write's answer (%s) cannot be read, the holder is not followed: %v",
			replica, resp.Header.Get("Content-Type"), err)
		return nil
	}
	holds := lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
	p.holder.took(replica, holds, time.Now())
	return nil
}
