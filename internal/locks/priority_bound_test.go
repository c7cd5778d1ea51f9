package locks

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// queueWorld plays groups and locks against each other as their reconcilers do: each step, a run
// started the step before ends, every group decides its request (Request) and starts once every
// lock lists it, and every lock reviews its queue (Decide) and keeps the new status.
type queueWorld struct {
	locks  map[string]*v1alpha1.OaatLock
	groups []*v1alpha1.OaatGroup
	now    time.Time
	// passes counts, per lock and per waiting request (group/since), the grants of that lock to
	// requests that began to wait later, while the request waits for the lock.
	passes map[string]map[string]int
}

// join adds a group of the priority naming the locks, wanting one run.
func (w *queueWorld) join(name string, priority int32, locks ...string) {
	g := builders.Group().Named(name).Locks(locks...).Obj()
	g.Spec.Priority = &priority
	w.groups = append(w.groups, g)
}

// step plays one round; started lists the groups whose run started in it.
func (w *queueWorld) step() (started []string) {
	w.now = w.now.Add(time.Minute)
	w.groups = slices.DeleteFunc(w.groups, func(g *v1alpha1.OaatGroup) bool { return g.Status.CurrentRun != nil })
	for _, g := range w.groups {
		in := Input{Locks: map[string]v1alpha1.Lock{}}
		for _, key := range g.Spec.Locks {
			in.Locks[key] = w.locks[key]
		}
		for _, o := range w.groups {
			if o != g && slices.ContainsFunc(o.Spec.Locks, func(k string) bool { return slices.Contains(g.Spec.Locks, k) }) {
				in.AddWaiter(o)
			}
		}
		g.Status.LockWait = Request(g, in, g.Status.LockWait, "x", g.Name+"-1", w.now)
		if g.Status.LockWait == nil {
			builders.WrapGroup(g).RunningIn("x", g.Name+"-1", at(w.now.Sub(t0)))
			started = append(started, g.Name)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(w.locks)) {
		w.review(key)
	}
	return started
}

// review reviews lock key, keeps its new status and counts the passes of its grants.
func (w *queueWorld) review(key string) {
	l := w.locks[key]
	in := ReviewInput{Lock: l, Now: w.now}
	for _, g := range w.groups {
		if slices.Contains(g.Spec.Locks, key) {
			in.Members = append(in.Members, Member{Namespace: g.Namespace, Name: g.Name, UID: string(g.UID), Names: true,
				Request: g.Status.LockWait, Run: g.Status.CurrentRun})
		}
	}
	in.Holders = make([]HolderFacts, len(l.LockHolders()))
	r := Decide(in)
	for _, h := range r.Granted {
		granted := FindMember(in.Members, "ns", h.Group, h.GroupUID)
		for _, m := range in.Members {
			if m.Request != nil && Requests(m.Request, key, m.Request.Pod) && !Lists(l, m.Namespace, m.Name, m.Request.Pod) &&
				!slices.ContainsFunc(r.Granted, func(o v1alpha1.LockHolder) bool { return o.Group == m.Name }) &&
				m.Request.Since.Before(&granted.Request.Since) {
				w.passes[key][fmt.Sprintf("%s/%s", m.Name, m.Request.Since.UTC().Format(time.RFC3339))]++
			}
		}
	}
	l.SetLockHolders(r.Holders)
	l.Queue().PassedOver = r.PassedOver
}

// TestPriorityPassBound proves the bound of priority: with a group of priority 5 arriving at
// every step for one of two locks of capacity 1 (or both), each request of priority 0 waiting for
// them is passed over by at most PassLimit grants of each lock, and every request is granted: no
// group holding one lock's grant keeps another from starting (the yield of Request).
func TestPriorityPassBound(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 47))
			w := &queueWorld{now: t0, passes: map[string]map[string]int{"l1": {}, "l2": {}}, locks: map[string]*v1alpha1.OaatLock{
				"l1": honouring(5), "l2": honouring(5)}}
			w.locks["l1"].Name, w.locks["l2"].Name = "l1", "l2"
			w.join("low-a", 0, "l1")
			w.join("low-b", 0, "l1", "l2")
			w.join("low-c", 0, "l2")
			lows := map[string]bool{"low-a": false, "low-b": false, "low-c": false}
			for i := range 60 {
				switch rng.IntN(3) {
				case 0:
					w.join(fmt.Sprintf("high-%02d", i), 5, "l1")
				case 1:
					w.join(fmt.Sprintf("high-%02d", i), 5, "l2")
				default:
					w.join(fmt.Sprintf("high-%02d", i), 5, "l2", "l1")
				}
				for _, name := range w.step() {
					if _, ok := lows[name]; ok {
						lows[name] = true
					}
				}
			}
			most := 0
			for lock, counts := range w.passes {
				for request, n := range counts {
					most = max(most, n)
					if n > v1alpha1.PassLimit {
						t.Errorf("lock %s passed over the request %s %d times, more than PassLimit (%d)", lock, request, n, v1alpha1.PassLimit)
					}
				}
			}
			for name, ran := range lows {
				if !ran {
					t.Errorf("group %s of priority 0 never started in 60 steps", name)
				}
			}
			t.Logf("requests passed over: %d on l1, %d on l2; the most passes of one request by one lock: %d", len(w.passes["l1"]), len(w.passes["l2"]), most)
			if len(w.passes["l1"])+len(w.passes["l2"]) == 0 {
				t.Error("no request was passed over: the test played no priority")
			}
		})
	}
}
