package support

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// LoadTarget is a small HTTP service standing for a target whose latency and error rate grow with
// its concurrent clients: a request to /work waits PerClient for each request in flight (itself
// included), and is refused with 503 at once when more than Limit are in flight. The test changes
// Limit to inject a fault (0: the target is down) and to let it recover.
type LoadTarget struct {
	// PerClient is the latency each request in flight adds.
	PerClient time.Duration

	mu       sync.Mutex
	limit    int
	inFlight int
	most     int
	served   int
	refused  int
	server   *http.Server
	listener net.Listener
}

// StartLoadTarget serves a LoadTarget of the limit on address (host:0 for a free port).
func StartLoadTarget(address string, limit int, perClient time.Duration) (*LoadTarget, error) {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("listening for the load target on %s: %w", address, err)
	}
	t := &LoadTarget{PerClient: perClient, limit: limit, listener: l}
	mux := http.NewServeMux()
	mux.HandleFunc("/work", t.work)
	t.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = t.server.Serve(l) }()
	return t, nil
}

// URL is the target's /work address.
func (t *LoadTarget) URL() string { return "http://" + t.listener.Addr().String() + "/work" }

// SetLimit sets how many clients the target serves at once.
func (t *LoadTarget) SetLimit(limit int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.limit = limit
}

// Stats are the most clients seen at once, the requests served and those refused.
func (t *LoadTarget) Stats() (most, served, refused int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.most, t.served, t.refused
}

// Close stops the target.
func (t *LoadTarget) Close() error { return t.server.Close() }

// work serves one client: refused over the limit, else after its latency.
func (t *LoadTarget) work(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	t.inFlight++
	t.most = max(t.most, t.inFlight)
	clients, over := t.inFlight, t.inFlight > t.limit
	if over {
		t.refused++
	}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.inFlight--
		t.mu.Unlock()
	}()
	if over {
		http.Error(w, fmt.Sprintf("overloaded: %d clients", clients), http.StatusServiceUnavailable)
		return
	}
	select {
	case <-time.After(time.Duration(clients) * t.PerClient):
	case <-r.Context().Done():
		return
	}
	t.mu.Lock()
	t.served++
	t.mu.Unlock()
	fmt.Fprintf(w, "served with %d clients\n", clients)
}
