package support

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// EventReceiver is a CloudEvents sink for the tests: it keeps the structured-mode events it is
// sent, each id once in the order first received, and counts the copies of each. It listens on
// one address for its whole life, so that it can be stopped (a sink gone: connections refused)
// and started again where the operator sends. Safe for concurrent use.
type EventReceiver struct {
	addr string

	mu       sync.Mutex
	server   *http.Server
	events   []ReceivedEvent
	copies   map[string]int
	refusing bool
}

// ReceivedEvent is a CloudEvent as the receiver kept it.
type ReceivedEvent struct {
	ID, Type, Subject, Source string
}

// NewEventReceiver makes a receiver of addr (host:port), not yet started.
func NewEventReceiver(addr string) *EventReceiver {
	return &EventReceiver{addr: addr, copies: map[string]int{}}
}

// URL is where the receiver takes events, with path.
func (r *EventReceiver) URL(path string) string { return "http://" + r.addr + path }

// Start listens, when it does not already.
func (r *EventReceiver) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.server != nil {
		return nil
	}
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		return err
	}
	r.server = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func(s *http.Server) { _ = s.Serve(l) }(r.server)
	return nil
}

// Stop closes the listener and every connection: the sink is gone until Start.
func (r *EventReceiver) Stop() error {
	r.mu.Lock()
	s := r.server
	r.server = nil
	r.mu.Unlock()
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// SetRefusing makes the receiver answer 503 (true) or take the events again (false), while it
// listens.
func (r *EventReceiver) SetRefusing(refusing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusing = refusing
}

// ServeHTTP takes one structured-mode CloudEvent.
func (r *EventReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var e ReceivedEvent
	if req.Header.Get("Content-Type") != "application/cloudevents+json" || json.NewDecoder(req.Body).Decode(&e) != nil || e.ID == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refusing {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.copies[e.ID]++
	if r.copies[e.ID] == 1 {
		r.events = append(r.events, e)
	}
	w.WriteHeader(http.StatusAccepted)
}

// Events are the events received, each id once, in the order first received.
func (r *EventReceiver) Events() []ReceivedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ReceivedEvent(nil), r.events...)
}

// Duplicates is how many copies beyond the first the receiver was sent, all ids together.
func (r *EventReceiver) Duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.copies {
		n += c - 1
	}
	return n
}
