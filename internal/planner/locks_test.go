package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// otherHolder is a slot held by the run of another group.
func otherHolder(group string) v1alpha1.LockHolder {
	return builders.Holder(group, group+"-x-1", at(-time.Minute))
}

// lockedInput is the input of a group naming the given locks, which exist as given.
func lockedInput(g *v1alpha1.OaatGroup, now time.Duration, namespaced []*v1alpha1.OaatLock, waiters []locks.Waiter, pods ...corev1.Pod) Input {
	all := make([]v1alpha1.Lock, 0, len(namespaced))
	for _, l := range namespaced {
		all = append(all, l)
	}
	return mixedInput(g, now, all, nil, waiters, pods...)
}

// mixedInput is the input of a group naming the given locks of either kind, in a namespace of
// the given labels.
func mixedInput(g *v1alpha1.OaatGroup, now time.Duration, all []v1alpha1.Lock, nsLabels map[string]string, waiters []locks.Waiter, pods ...corev1.Pod) Input {
	in := input(g, now, pods...)
	in.Locks = locks.Input{Locks: map[string]v1alpha1.Lock{}, NamespaceLabels: nsLabels, NamespaceRead: true, Waiters: waiters}
	for _, l := range all {
		in.Locks.Locks[l.LockKey()] = l
	}
	return in
}

func acquired(p Plan) []string {
	var names []string
	for _, u := range p.Locks.Acquire {
		names = append(names, u.Lock.LockKey())
	}
	return names
}

func released(p Plan) []string {
	var names []string
	for _, u := range p.Locks.Release {
		names = append(names, u.Lock.LockKey())
	}
	return names
}

func TestTakeLocks(t *testing.T) {
	older := locks.Waiter{Group: "older", Since: t0.Add(-time.Hour), Locks: []string{"nas"}}
	younger := locks.Waiter{Group: "younger", Since: t0.Add(time.Hour), Locks: []string{"nas"}}
	tests := []struct {
		name        string
		spec        []string
		locks       []*v1alpha1.OaatLock
		waiters     []locks.Waiter
		waitingFrom *metav1.Time
		wantStart   bool
		wantAcquire []string
		wantWait    []string
	}{
		{name: "no locks", wantStart: true},
		{name: "free lock", spec: []string{"nas"}, locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1)},
			wantStart: true, wantAcquire: []string{"nas"}},
		{name: "full lock", spec: []string{"nas"}, locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))},
			wantWait: []string{"nas"}},
		{name: "capacity 2 with one holder", spec: []string{"db"}, locks: []*v1alpha1.OaatLock{builders.Lock("db", 2, otherHolder("other"))},
			wantStart: true, wantAcquire: []string{"db"}},
		{name: "capacity 2 with two holders", spec: []string{"db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("db", 2, otherHolder("one"), otherHolder("two"))},
			wantWait: []string{"db"}},
		{name: "all or none: one of two locks full", spec: []string{"nas", "db"},
			locks:    []*v1alpha1.OaatLock{builders.Lock("nas", 1), builders.Lock("db", 1, otherHolder("other"))},
			wantWait: []string{"db"}},
		{name: "two free locks, taken in name order", spec: []string{"nas", "db"},
			locks:     []*v1alpha1.OaatLock{builders.Lock("nas", 1), builders.Lock("db", 1)},
			wantStart: true, wantAcquire: []string{"db", "nas"}},
		{name: "a freed slot goes to the group that waited longer", spec: []string{"nas"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, waiters: []locks.Waiter{older},
			wantWait: []string{"nas"}},
		{name: "a younger waiter does not block", spec: []string{"nas"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, waiters: []locks.Waiter{younger},
			waitingFrom: at(0), wantStart: true, wantAcquire: []string{"nas"}},
		{name: "an older waiter of another lock does not block", spec: []string{"nas"},
			locks:     []*v1alpha1.OaatLock{builders.Lock("nas", 1)},
			waiters:   []locks.Waiter{{Group: "elsewhere", Since: t0.Add(-time.Hour), Locks: []string{"db"}}},
			wantStart: true, wantAcquire: []string{"nas"}},
		{name: "capacity 2 leaves a slot beside the older waiter's", spec: []string{"db"},
			locks: []*v1alpha1.OaatLock{builders.Lock("db", 2)}, waiters: []locks.Waiter{{Group: "older", Since: t0.Add(-time.Hour), Locks: []string{"db"}}},
			wantStart: true, wantAcquire: []string{"db"}},
		{name: "the group's own slot of an ended run counts as free", spec: []string{"nas"},
			locks: []*v1alpha1.OaatLock{builders.Lock("nas", 1, v1alpha1.LockHolder{
				Group: "backups", GroupUID: "backups-uid", Item: "a", Pod: "old", Since: *at(-time.Hour)})},
			wantStart: true, wantAcquire: []string{"nas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup("a")
			g.Spec.Locks = tt.spec
			if tt.waitingFrom != nil {
				g.Status.LockWait = &v1alpha1.LockWait{Since: *tt.waitingFrom, Locks: tt.spec}
			}
			p := Decide(lockedInput(g, 0, tt.locks, tt.waiters))
			if started := p.Create != nil; started != tt.wantStart {
				t.Fatalf("started = %v, want %v (lockWait %+v)", started, tt.wantStart, p.Status.LockWait)
			}
			if !slices.Equal(acquired(p), tt.wantAcquire) {
				t.Fatalf("acquired %v, want %v", acquired(p), tt.wantAcquire)
			}
			for _, u := range p.Locks.Acquire {
				mine := slices.IndexFunc(u.Holders, func(h v1alpha1.LockHolder) bool { return h.Group == "backups" })
				if mine < 0 || u.Holders[mine].Pod != p.Create.Name || u.Holders[mine].GroupUID != "backups-uid" ||
					u.Holders[mine].Item != "a" || !u.Holders[mine].Since.Equal(at(0)) {
					t.Fatalf("holders of %s: %+v, want the new run's pod %s", u.Lock.LockKey(), u.Holders, p.Create.Name)
				}
				if len(u.Holders) > u.Lock.CapacityOrDefault() {
					t.Fatalf("holders of %s: %d over capacity %d", u.Lock.LockKey(), len(u.Holders), u.Lock.CapacityOrDefault())
				}
			}
			if tt.wantWait == nil {
				if p.Status.LockWait != nil {
					t.Fatalf("lockWait %+v, want none", p.Status.LockWait)
				}
				return
			}
			if p.Status.CurrentRun != nil || p.Status.RunCount != 0 {
				t.Fatalf("a waiting group records a run: %+v, runCount %d", p.Status.CurrentRun, p.Status.RunCount)
			}
			w := p.Status.LockWait
			if w == nil || !slices.Equal(w.Locks, tt.wantWait) || !w.Since.Equal(at(0)) {
				t.Fatalf("lockWait %+v, want %v since %v", w, tt.wantWait, t0)
			}
			if it := planItem(t, p, "a"); it.WaitReason != v1alpha1.WaitLockHeld {
				t.Fatalf("waitReason %q, want %s", it.WaitReason, v1alpha1.WaitLockHeld)
			}
			if p.RequeueAfter != lockRecheck {
				t.Fatalf("requeueAfter %v, want %v", p.RequeueAfter, lockRecheck)
			}
		})
	}
}

func TestLockWaitKeepsItsStartAndIsObservedOnAcquisition(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	full := []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))}

	p := Decide(lockedInput(g, 0, full, nil))
	g = applied(g, p)
	p = Decide(lockedInput(g, 10*time.Minute, full, nil))
	if w := p.Status.LockWait; w == nil || !w.Since.Equal(at(0)) {
		t.Fatalf("lockWait %+v after ten minutes, want it to keep its start %v", w, t0)
	}
	g = applied(g, p)
	p = Decide(lockedInput(g, 15*time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, nil))
	if p.Create == nil || p.Status.LockWait != nil {
		t.Fatalf("a freed lock was not taken: create %v, lockWait %+v", p.Create, p.Status.LockWait)
	}
	if p.Locks.Waited != 15*time.Minute {
		t.Fatalf("waited %v, want 15m", p.Locks.Waited)
	}
}

func TestMissingLockMakesTheGroupNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.Locks = []string{"nas", "db"}
	p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("db", 1)}, nil))
	if p.Create != nil || len(p.Locks.Acquire) > 0 {
		t.Fatalf("a group naming a missing lock starts: %v, acquires %v", p.Create, acquired(p))
	}
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonLockNotFound) ||
		c.Message != `OaatLock "nas" named by spec.locks not found in namespace ns` {
		t.Fatalf("Ready = %+v", c)
	}
}

func TestReleaseLocks(t *testing.T) {
	mine := func(pod, uid string) v1alpha1.LockHolder {
		return v1alpha1.LockHolder{Group: "backups", GroupUID: uid, Item: "a", Pod: pod, Since: *at(-time.Hour)}
	}
	g := newGroup("a")
	pod1 := podbuild.Name("backups", "a", 1)
	t.Run("the current run keeps its slot", func(t *testing.T) {
		g := g.DeepCopy()
		g.Spec.Locks = []string{"nas"}
		running(t, g, "a", 1, at(-time.Minute))
		pod := runPod(t, g, "a", 1, corev1.PodRunning)
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "backups-uid"))}, nil, pod))
		if len(p.Locks.Release) > 0 || len(p.Locks.Acquire) > 0 {
			t.Fatalf("released %v, acquired %v during the run", released(p), acquired(p))
		}
	})
	t.Run("the ended run's slot goes once its outcome is recorded", func(t *testing.T) {
		g := g.DeepCopy()
		g.Spec.Locks = []string{"nas"}
		g.Spec.Suspend = true // nothing starts next
		running(t, g, "a", 1, at(-time.Minute))
		pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"), mine(pod1, "backups-uid"))}, nil, pod))
		if p.Status.CurrentRun != nil || !slices.Equal(released(p), []string{"nas"}) {
			t.Fatalf("currentRun %+v, released %v", p.Status.CurrentRun, released(p))
		}
		if h := p.Locks.Release[0].Holders; len(h) != 1 || h[0].Group != "other" {
			t.Fatalf("holders after release %+v, want only the other group's", h)
		}
	})
	t.Run("the slot of a run never started is released", func(t *testing.T) {
		g := g.DeepCopy()
		g.Spec.Suspend = true
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "backups-uid"))}, nil))
		if !slices.Equal(released(p), []string{"nas"}) {
			t.Fatalf("released %v, want the lock the group no longer names", released(p))
		}
	})
	t.Run("the slot of an earlier group of the same name is released", func(t *testing.T) {
		g := g.DeepCopy()
		running(t, g, "a", 1, at(-time.Minute))
		pod := runPod(t, g, "a", 1, corev1.PodRunning)
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "old-uid"))}, nil, pod))
		if !slices.Equal(released(p), []string{"nas"}) {
			t.Fatalf("released %v", released(p))
		}
	})
	t.Run("nothing is released while a pod of the group that is not the current run lives", func(t *testing.T) {
		g := g.DeepCopy()
		g.Spec.Suspend = true
		rogue := runPod(t, g, "a", 1, corev1.PodRunning)
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "backups-uid"))}, nil, rogue))
		if len(p.Locks.Release) > 0 {
			t.Fatalf("released %v while pod %s lives", released(p), rogue.Name)
		}
	})
	t.Run("the next run replaces the ended run's slot in one write", func(t *testing.T) {
		g := newGroup("a", "b")
		g.Spec.Locks = []string{"nas"}
		running(t, g, "a", 1, at(-time.Minute))
		pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "backups-uid"))}, nil, pod))
		if p.Create == nil || !slices.Equal(acquired(p), []string{"nas"}) || len(p.Locks.Release) > 0 {
			t.Fatalf("create %v, acquired %v, released %v", p.Create, acquired(p), released(p))
		}
		if h := p.Locks.Acquire[0].Holders; len(h) != 1 || h[0].Pod != p.Create.Name {
			t.Fatalf("holders %+v, want only the new run", h)
		}
	})
	t.Run("a younger group's next run gives the slot up to an older waiter", func(t *testing.T) {
		g := newGroup("a", "b")
		g.Spec.Locks = []string{"nas"}
		running(t, g, "a", 1, at(-time.Minute))
		pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(0))
		waiter := locks.Waiter{Group: "waiting", Since: t0.Add(-time.Minute), Locks: []string{"nas"}}
		p := Decide(lockedInput(g, 0, []*v1alpha1.OaatLock{builders.Lock("nas", 1, mine(pod1, "backups-uid"))}, []locks.Waiter{waiter}, pod))
		if p.Create != nil || !slices.Equal(released(p), []string{"nas"}) || p.Status.LockWait == nil {
			t.Fatalf("create %v, released %v, lockWait %+v", p.Create, released(p), p.Status.LockWait)
		}
	})
}

// TestTwoLockGroupIsNotStarved: a group needing two locks claims a slot of each as soon as it
// waits; groups needing one of them then wait behind it, so the lock that frees first stays free
// for it until the other frees too.
func TestTwoLockGroupIsNotStarved(t *testing.T) {
	both := locks.Waiter{Group: "both", Since: t0.Add(-time.Minute), Locks: []string{"db", "nas"}}
	g := newGroup("a")
	g.Spec.Locks = []string{"nas"}
	existing := []*v1alpha1.OaatLock{builders.Lock("nas", 1), builders.Lock("db", 1, otherHolder("db-only"))}
	p := Decide(lockedInput(g, 0, existing, []locks.Waiter{both}))
	if p.Create != nil || p.Status.LockWait == nil {
		t.Fatalf("a one-lock group took the slot the two-lock group waits for: create %v", p.Create)
	}

	// Once db frees, the two-lock group, oldest, finds room on both.
	two := newGroup("a")
	two.Name, two.UID = "both", "both-uid"
	two.Spec.Locks = []string{"nas", "db"}
	two.Status.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(both.Since), Locks: []string{"db"}}
	one := locks.Waiter{Group: "backups", Since: t0, Locks: []string{"nas"}}
	p = Decide(lockedInput(two, time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1), builders.Lock("db", 1)}, []locks.Waiter{one}))
	if p.Create == nil || !slices.Equal(acquired(p), []string{"db", "nas"}) {
		t.Fatalf("the two-lock group did not take both locks: create %v, acquired %v", p.Create, acquired(p))
	}
}

// On-demand runs take the group's locks like scheduled ones: the request waits, saying so, while a
// lock is full, and its run takes the lock when it starts.
func TestOnDemandRunTakesTheLocks(t *testing.T) {
	g := newGroup("a", "b")
	g.Spec.Locks = []string{"nas"}
	onDemandRun := newOnDemandRun("now", "backups", "b", 0)

	p := Decide(withOnDemandRuns(lockedInput(g, time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1, otherHolder("other"))}, nil), onDemandRun))
	if p.Create != nil {
		t.Fatalf("the request's run started while the lock is full: %s", p.Create.Name)
	}
	if got := updates(p.OpenOnDemandRuns); !slices.Equal(got, []string{"now Pending " + string(v1alpha1.WaitLockHeld)}) {
		t.Fatalf("open requests %v, want the request pending with reason LockHeld", got)
	}
	if msg := p.OpenOnDemandRuns[0].Status.Message; msg != "waits for a slot of OaatLock nas" {
		t.Fatalf("message %q", msg)
	}

	p = Decide(withOnDemandRuns(lockedInput(g, time.Minute, []*v1alpha1.OaatLock{builders.Lock("nas", 1)}, nil), onDemandRun))
	if p.Create == nil || p.Status.CurrentRun.OaatRun != "now" || !slices.Equal(acquired(p), []string{"nas"}) {
		t.Fatalf("create %v, currentRun %+v, acquired %v: want the request's run holding nas", p.Create, p.Status.CurrentRun, acquired(p))
	}
	if h := p.Locks.Acquire[0].Holders; h[0].Item != "b" || h[0].Pod != p.Create.Name {
		t.Fatalf("holders %+v", h)
	}
}
