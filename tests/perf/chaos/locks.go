package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// sharedLock is a lock that some of the chaos run's groups name, as created at the start.
type sharedLock struct {
	name     string
	capacity int
	// cluster says it is a ClusterOaatLock, which the groups of namespace and of bNamespace
	// name in spec.clusterLocks; else an OaatLock of namespace, named in spec.locks. The names of
	// the run's locks differ across both kinds.
	cluster bool
}

// sharedLocks are the chaos run's OaatLocks: one that lets the groups naming it run one at a time
// among themselves, one that lets two of them run at once.
var sharedLocks = []sharedLock{{name: "nas", capacity: 1}, {name: "db", capacity: 2}}

// clusterLock is the ClusterOaatLock that, with a second installation, groups of namespace and
// of bNamespace share: two installations each record their own groups' holders in it.
var clusterLock = sharedLock{name: "shared", capacity: 2, cluster: true}

// kind names the lock's kind in messages.
func (l sharedLock) kind() string {
	if l.cluster {
		return v1alpha1.KindClusterOaatLock
	}
	return "OaatLock"
}

// locksOf returns the OaatLocks and the ClusterOaatLocks group i of namespace names: of every
// eight groups, one names nas, one db, and two both, in either order, so that groups needing two
// locks compete with groups needing one of them; one more takes db exclusively (a prune) and one
// names it with a priority (optionOf). With a cluster lock (a second installation), one more names
// it and one names nas and it, so that the cluster lock's groups of namespace also compete with
// groups of the same installation needing an OaatLock; the others name none.
func locksOf(i int, cluster bool) (nsLocks, clusterLocks []string) {
	switch i % 8 {
	case 0:
		return []string{"nas"}, nil
	case 1:
		return []string{"db"}, nil
	case 2:
		return []string{"nas", "db"}, nil
	case 3:
		return []string{"db", "nas"}, nil
	case 4:
		if cluster {
			return nil, []string{clusterLock.name}
		}
	case 5:
		if cluster {
			return []string{"nas"}, []string{clusterLock.name}
		}
	case 6, 7:
		return []string{"db"}, nil
	}
	return nil, nil
}

// prunePriority is the priority of the chaos run's prioritized groups, which the OaatLocks honour
// (their spec.maxPriority).
const prunePriority = 5

// optionOf returns how group i of namespace takes db (spec.lockOptions, the zero option for the
// default) and its spec.priority (nil for none): of every eight groups, the seventh takes it
// Exclusive, the eighth has priority prunePriority.
func optionOf(i int) (v1alpha1.LockOption, *int32) {
	switch i % 8 {
	case 6:
		return v1alpha1.LockOption{Lock: "db", Mode: v1alpha1.LockExclusive}, nil
	case 7:
		return v1alpha1.LockOption{}, ptr.To[int32](prunePriority)
	}
	return v1alpha1.LockOption{}, nil
}

// groupPlan is a group of the chaos run as created: its namespace, its name, the locks it names,
// how it takes one of them and its priority.
type groupPlan struct {
	namespace, name     string
	locks, clusterLocks []string
	option              v1alpha1.LockOption
	priority            *int32
}

// lockOptions are the group's spec.lockOptions: its option, none for the default.
func (g groupPlan) lockOptions() []v1alpha1.LockOption {
	if g.option.Lock == "" {
		return nil
	}
	return []v1alpha1.LockOption{g.option}
}

// key is the group's object key.
func (g groupPlan) key() client.ObjectKey {
	return client.ObjectKey{Namespace: g.namespace, Name: g.name}
}

// planGroups returns the run's groups: groups of namespace (groupName), some naming locks
// (locksOf), and bGroups of bNamespace (bGroupName), each naming the cluster lock; bGroups is 0
// without a second installation. The names differ across namespaces, so that the checks, which key
// pods, spans and status writes by group name, need no namespace.
func planGroups(groups, bGroups int) []groupPlan {
	plan := make([]groupPlan, 0, groups+bGroups)
	for i := range groups {
		nsLocks, clusterLocks := locksOf(i, bGroups > 0)
		option, priority := optionOf(i)
		plan = append(plan, groupPlan{namespace: namespace, name: groupName(i), locks: nsLocks, clusterLocks: clusterLocks, option: option, priority: priority})
	}
	for i := range bGroups {
		plan = append(plan, groupPlan{namespace: bNamespace, name: bGroupName(i), clusterLocks: []string{clusterLock.name}})
	}
	return plan
}

// runLocks are the locks of the run: the shared OaatLocks, and the cluster lock with a second
// installation.
func runLocks(second bool) []sharedLock {
	all := slices.Clone(sharedLocks)
	if second {
		all = append(all, clusterLock)
	}
	return all
}

// newLock returns the OaatLock of that capacity.
func newLock(name string, capacity int) *v1alpha1.OaatLock {
	return support.Lock(namespace, name, int32(capacity))
}

// newClusterLock returns the ClusterOaatLock of that capacity, which the groups of namespace and
// of bNamespace may name.
func newClusterLock(name string, capacity int) *v1alpha1.ClusterOaatLock {
	lock := support.ClusterLock(name, int32(capacity), nil)
	lock.Spec.NamespaceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{namespace, bNamespace},
	}}
	return lock
}

// object returns the lock of that spec as the run creates it.
func (l sharedLock) object(spec lockSpec) client.Object {
	if l.cluster {
		lock := newClusterLock(l.name, spec.capacity)
		lock.Spec.CapacitySchedule = spec.schedule
		return lock
	}
	return specLock(l.name, spec)
}

// specLock returns the OaatLock of that name and spec, allowing exclusive holders and honouring
// prunePriority: the lock the run creates, and, whatever the lock's kind, what the capacity checks
// read its capacities from.
func specLock(name string, spec lockSpec) *v1alpha1.OaatLock {
	lock := newLock(name, spec.capacity)
	lock.Spec.CapacitySchedule = spec.schedule
	lock.Spec.ExclusiveHolders, lock.Spec.MaxPriority = v1alpha1.ExclusiveAllowed, ptr.To[int32](prunePriority)
	return lock
}

// empty returns an empty object of the lock's kind, to read it into.
func (l sharedLock) empty() client.Object {
	if l.cluster {
		return &v1alpha1.ClusterOaatLock{}
	}
	return &v1alpha1.OaatLock{}
}

// key is the lock's object key.
func (l sharedLock) key() client.ObjectKey {
	if l.cluster {
		return client.ObjectKey{Name: l.name}
	}
	return client.ObjectKey{Namespace: namespace, Name: l.name}
}

// lockHolders returns the holders of a lock of either kind.
func lockHolders(obj client.Object) []v1alpha1.LockHolder {
	switch l := obj.(type) {
	case *v1alpha1.OaatLock:
		return l.Status.Holders
	case *v1alpha1.ClusterOaatLock:
		return l.Status.Holders
	}
	return nil
}

// setLockSpec sets the capacity and the capacity schedule of a lock of either kind.
func setLockSpec(obj client.Object, spec lockSpec) {
	switch l := obj.(type) {
	case *v1alpha1.OaatLock:
		l.Spec.Capacity, l.Spec.CapacitySchedule = int32(spec.capacity), spec.schedule
	case *v1alpha1.ClusterOaatLock:
		l.Spec.Capacity, l.Spec.CapacitySchedule = int32(spec.capacity), spec.schedule
	}
}

// lockGrace is how long before a pod's start a change of its group's locks or of a lock's
// capacity may not have reached the replica that started it (its cache, a request in flight): a
// start is checked against a lock only when its group named the lock throughout the grace before
// it, against the highest capacity the lock had during it.
const lockGrace = 10 * time.Second

// capacityChange is a capacity a lock was given, and when.
type capacityChange struct {
	at       time.Time
	capacity int
}

// lockWatch is what the chaos run did to the shared locks and to the locks the groups name, and
// when: the spans during which each group named each lock, and each lock's capacities. The
// capacity check (checkCapacity) reads the pods' lives against it.
type lockWatch struct {
	// locks are the run's locks.
	locks []sharedLock
	// namespaces are the groups' namespaces.
	namespaces map[string]string
	// spans are, per lock and group, the spans during which the group named the lock.
	spans map[string]map[string][]span
	// capacities are, per lock, its capacities in force in order, the first from the start, those
	// its capacity schedule brings included.
	capacities map[string][]capacityChange
	// specs are, per lock, its spec.capacity and spec.capacitySchedule now.
	specs map[string]lockSpec
	// exclusive are, per lock, the groups that take it Exclusive (spec.lockOptions): a start of
	// one of their pods while another pod holds the lock, or of another pod while one of theirs
	// does, is a violation.
	exclusive map[string]map[string]bool
}

// lockSpec is what a lock's capacity is made of: spec.capacity and spec.capacitySchedule.
type lockSpec struct {
	capacity int
	schedule []v1alpha1.CapacityWindow
}

// scheduleHorizon is how far ahead of a change the watch records the capacities a lock's schedule
// brings: longer than a run.
const scheduleHorizon = time.Hour

// newLockWatch records the locks and the locks of the groups as created at start.
func newLockWatch(all []sharedLock, plan []groupPlan, start time.Time) *lockWatch {
	w := &lockWatch{
		locks: all, namespaces: map[string]string{},
		spans: map[string]map[string][]span{}, capacities: map[string][]capacityChange{}, specs: map[string]lockSpec{},
		exclusive: map[string]map[string]bool{},
	}
	for _, l := range all {
		w.spans[l.name] = map[string][]span{}
		w.capacities[l.name] = []capacityChange{{at: start, capacity: l.capacity}}
		w.specs[l.name] = lockSpec{capacity: l.capacity}
		w.exclusive[l.name] = map[string]bool{}
	}
	for _, g := range plan {
		w.namespaces[g.name] = g.namespace
		if g.option.Mode == v1alpha1.LockExclusive {
			w.exclusive[g.option.Lock][g.name] = true
		}
		for _, lock := range slices.Concat(g.locks, g.clusterLocks) {
			w.setNamed(lock, g.name, true, start)
		}
	}
	return w
}

// setNamed records that the group began (named) or stopped naming the lock at that time.
func (w *lockWatch) setNamed(lock, group string, named bool, at time.Time) {
	spans := w.spans[lock][group]
	open := len(spans) > 0 && spans[len(spans)-1].to.IsZero()
	switch {
	case named && !open:
		w.spans[lock][group] = append(spans, span{from: at})
	case !named && open:
		spans[len(spans)-1].to = at
	}
}

// names reports whether the group names the lock now.
func (w *lockWatch) names(lock, group string) bool {
	spans := w.spans[lock][group]
	return len(spans) > 0 && spans[len(spans)-1].to.IsZero()
}

// setSpec records the lock's new spec.capacity and spec.capacitySchedule, in force from at: the
// capacities recorded after at are dropped, and those the new spec brings recorded, from at and at
// each change of its schedule within scheduleHorizon (locks.CapacityAt, as the lock's reconciler
// reads it).
func (w *lockWatch) setSpec(lock string, spec lockSpec, at time.Time) {
	w.specs[lock] = spec
	changes := slices.DeleteFunc(w.capacities[lock], func(c capacityChange) bool { return c.at.After(at) })
	obj := specLock(lock, spec)
	c := locks.CapacityAt(obj, at)
	changes = append(changes, capacityChange{at: at, capacity: c.InForce})
	for !c.NextAt.IsZero() && c.NextAt.Before(at.Add(scheduleHorizon)) {
		changes = append(changes, capacityChange{at: c.NextAt, capacity: c.Next})
		c = locks.CapacityAt(obj, c.NextAt)
	}
	w.capacities[lock] = changes
}

// capacity is the lock's spec.capacity now.
func (w *lockWatch) capacity(lock string) int { return w.specs[lock].capacity }

// inForce is the lock's capacity in force at t, as recorded.
func (w *lockWatch) inForce(lock string, t time.Time) int {
	capacity := 0
	for _, c := range w.capacities[lock] {
		if !c.at.After(t) {
			capacity = c.capacity
		}
	}
	return capacity
}

// maxCapacity is the highest capacity the lock had during [from, to].
func (w *lockWatch) maxCapacity(lock string, from, to time.Time) int {
	highest := 0
	changes := w.capacities[lock]
	for i, c := range changes {
		ends := i+1 < len(changes) && !changes[i+1].at.After(from)
		if !ends && !c.at.After(to) {
			highest = max(highest, c.capacity)
		}
	}
	return highest
}

// namedThroughout reports whether the group named the lock during all of [from, to].
func (w *lockWatch) namedThroughout(lock, group string, from, to time.Time) bool {
	return slices.ContainsFunc(w.spans[lock][group], func(s span) bool {
		return !s.from.After(from) && (s.to.IsZero() || !s.to.Before(to))
	})
}

// namedDuring reports whether the group named the lock at some time in [from, to].
func (w *lockWatch) namedDuring(lock, group string, from, to time.Time) bool {
	return slices.ContainsFunc(w.spans[lock][group], func(s span) bool {
		return !s.from.After(to) && (s.to.IsZero() || !s.to.Before(from))
	})
}

// named are the groups that named the lock at some time, sorted.
func (w *lockWatch) named(lock string) []string {
	return slices.Sorted(maps.Keys(w.spans[lock]))
}

// peers maps each group to the groups that shared a lock with it at some time, itself included,
// for the starvation bound: an item of a locked group may wait for the items of all of them.
func (w *lockWatch) peers() map[string][]string {
	out := map[string][]string{}
	for lock := range w.spans {
		members := w.named(lock)
		for _, g := range members {
			for _, p := range members {
				if !slices.Contains(out[g], p) {
					out[g] = append(out[g], p)
				}
			}
		}
	}
	return out
}

// describe says which groups name which lock, for the report.
func (w *lockWatch) describe() string {
	parts := make([]string, 0, len(w.locks))
	for _, l := range w.locks {
		named := w.named(l.name)
		if !l.cluster {
			parts = append(parts, fmt.Sprintf("%s (capacity %d) named by %d groups", l.name, l.capacity, len(named)))
			continue
		}
		perNamespace := map[string]int{}
		for _, g := range named {
			perNamespace[w.namespaces[g]]++
		}
		parts = append(parts, fmt.Sprintf("%s %s (capacity %d) named by %d groups of %s and %d of %s",
			v1alpha1.KindClusterOaatLock, l.name, l.capacity, perNamespace[namespace], namespace, perNamespace[bNamespace], bNamespace))
	}
	return strings.Join(parts, ", ")
}

// lockStarts is what the capacity check found for one lock.
type lockStarts struct {
	// checked are the starts of pods whose group named the lock throughout lockGrace before;
	// excused those of groups that began or stopped naming it within lockGrace.
	checked, excused int
	// most is the most pods holding the lock at a checked start, the new one included.
	most int
	// runs counts, per namespace, the starts of pods whose group named the lock then (checked
	// or excused): for a cluster lock, the runs each installation made under it.
	runs map[string]int
	// excess describes the checked starts at which more pods held the lock than its capacity, or
	// an exclusive pod held it beside another.
	excess []string
	// exclusive counts the checked starts of pods taking the lock exclusively, and alone the
	// checked starts at which such a pod held the lock, the new one included, alone.
	exclusive, alone int
}

// starts checks every start of a pod whose group named the lock against the pods that held a slot
// of it then (of both namespaces for a cluster lock; groups are told apart by name alone): a pod holds a slot from its start while its group named the lock at that start, or
// from the time its group began to name it while it ran (the operator lists it then), to its end.
// A pod holds no slot at the start of another once its container had finished by that start
// (finishedAt, whole seconds, against the creationTimestamp), which refutes an end the observer
// saw late. Runs that started before a capacity cut, or before their group named the lock, may
// outnumber the capacity; no run may start while they do.
func (w *lockWatch) starts(lock string, pods []perfkit.PodLife) lockStarts {
	r := lockStarts{runs: map[string]int{}}
	for _, p := range pods {
		if !w.namedDuring(lock, p.Group, p.SeenCreated, p.SeenCreated) {
			continue
		}
		r.runs[p.Namespace]++
		if !w.namedThroughout(lock, p.Group, p.SeenCreated.Add(-lockGrace), p.SeenCreated) {
			r.excused++
			continue
		}
		r.checked++
		holding, sole := []string{p.Name}, w.exclusive[lock][p.Group]
		for _, q := range pods {
			if q.Name != p.Name && w.holdsAt(lock, q, p) {
				holding = append(holding, q.Name)
				sole = sole || w.exclusive[lock][q.Group]
			}
		}
		r.most = max(r.most, len(holding))
		if sole {
			r.exclusive++
			if len(holding) > 1 {
				r.excess = append(r.excess, fmt.Sprintf("%s: pod %s of group %s started while lock %s was held beside an exclusive holder: %v",
					p.SeenCreated.Format(time.RFC3339Nano), p.Name, p.Group, lock, holding))
			} else {
				r.alone++
			}
		}
		if capacity := w.maxCapacity(lock, p.SeenCreated.Add(-lockGrace), p.SeenCreated); len(holding) > capacity {
			r.excess = append(r.excess, fmt.Sprintf("%s: pod %s of group %s started while %d pods held lock %s of capacity %d: %v",
				p.SeenCreated.Format(time.RFC3339Nano), p.Name, p.Group, len(holding)-1, lock, capacity, holding[1:]))
		}
	}
	return r
}

// holdsAt reports whether pod q held a slot of the lock when pod p started.
func (w *lockWatch) holdsAt(lock string, q, p perfkit.PodLife) bool {
	start := p.SeenCreated
	live := q.SeenCreated.Before(start) && (q.SeenEnded.IsZero() || q.SeenEnded.After(start)) &&
		(q.FinishedAt.IsZero() || q.FinishedAt.After(p.Created))
	if !live {
		return false
	}
	atItsStart := w.namedThroughout(lock, q.Group, q.SeenCreated.Add(-lockGrace), q.SeenCreated)
	sinceSeen := start.Add(-lockGrace).After(q.SeenCreated) && w.namedDuring(lock, q.Group, q.SeenCreated, start.Add(-lockGrace))
	return atItsStart || sinceSeen
}

// checkCapacity reports, per lock, the starts of pods of the groups naming it at which more pods
// held a slot of it than its capacity (lockWatch.starts): violations. pods are those of every
// namespace of the run.
func (c *chaos) checkCapacity(pods []perfkit.PodLife) {
	for _, l := range c.locks.locks {
		r := c.locks.starts(l.name, pods)
		for _, e := range r.excess {
			c.violationf("capacity of %s %s: %s", l.kind(), l.name, e)
		}
		c.rep.Printf("  %s %s (capacity %d at the end, %d groups named it at some time): starts checked: %d, within %s of a change of the group's locks (not checked): %d; most pods holding it at a start: %d; starts over its capacity or beside an exclusive holder: %d (must be 0)",
			l.kind(), l.name, c.locks.capacity(l.name), len(c.locks.named(l.name)), r.checked, lockGrace, r.excused, r.most, len(r.excess))
		if len(c.locks.exclusive[l.name]) > 0 {
			c.rep.Printf("    exclusive: %d groups take it exclusively; checked starts with an exclusive pod holding it: %d, of which alone: %d",
				len(c.locks.exclusive[l.name]), r.exclusive, r.alone)
		}
		if l.cluster {
			c.rep.Printf("    runs under it by installation: the main one (%s, %d replicas) %d, the second one (%s, %d replica) %d",
				namespace, replicaCount, r.runs[namespace], bNamespace, bReplicaCount, r.runs[bNamespace])
		}
		for i, e := range r.excess {
			if i == 10 {
				c.rep.Printf("    ... and %d more", len(r.excess)-i)
				break
			}
			c.rep.Printf("    %s", e)
		}
	}
}

// leakGrace is how long the check of leaked locks waits, once the groups are drained, for a
// stale holder to go: the lock's reconciler releases a slot at its review after the status
// write that ends its run, or, after a replica's death, at the next leader's first review.
const leakGrace = 30 * time.Second

// checkLeaks reports the lock holders that outlive their run once the groups are drained: a
// holder whose group names its pod neither as its current run nor as its request, or whose group
// is gone. Those still there
// after leakGrace are leaked locks, violations; so is any other holder still there then (a run
// that started after the drain and held its slot that long): every lock must be empty at the
// end. It covers the OaatLocks and the cluster lock, whose holders of bNamespace only the second
// installation can release.
func (c *chaos) checkLeaks(ctx context.Context) error {
	first, err := c.holders(ctx)
	if err != nil {
		return err
	}
	left := first
	deadline := time.Now().Add(leakGrace)
	for len(left) > 0 && time.Now().Before(deadline) {
		if err := perfkit.Sleep(ctx, time.Second); err != nil {
			return err
		}
		if left, err = c.holders(ctx); err != nil {
			return err
		}
	}
	stale := func(hs []heldSlot) (n int) {
		for _, h := range hs {
			if h.stale {
				n++
			}
		}
		return n
	}
	for _, h := range left {
		if h.stale {
			c.violationf("leaked lock: %s", h)
		} else {
			c.violationf("lock not empty at the end: %s", h)
		}
	}
	c.rep.Printf("  lock holders without a run once the groups were drained: %d; still there %s later (leaked locks): %d (must be 0); holders of a run still there then (every lock must be empty at the end): %d (must be 0)",
		stale(first), leakGrace, stale(left), len(left)-stale(left))
	for _, h := range first {
		if h.stale {
			c.rep.Printf("    %s", h)
		}
	}
	for _, h := range left {
		c.rep.Printf("    still there: %s", h)
	}
	return nil
}

// heldSlot is a holder of one of the run's locks.
type heldSlot struct {
	lock   sharedLock
	holder v1alpha1.LockHolder
	// stale says its group is gone, or has no current run with its pod.
	stale bool
	// gone says its group is gone.
	gone bool
}

func (h heldSlot) String() string {
	group := h.holder.Group
	if h.lock.cluster {
		group = h.holder.Namespace + "/" + group
	}
	switch {
	case h.gone:
		return fmt.Sprintf("%s %s: holder %s (pod %s) of a group that is gone", h.lock.kind(), h.lock.name, group, h.holder.Pod)
	case h.stale:
		return fmt.Sprintf("%s %s: holder %s (pod %s, since %s) without that run", h.lock.kind(), h.lock.name, group, h.holder.Pod,
			h.holder.Since.Format(time.RFC3339))
	}
	return fmt.Sprintf("%s %s: holder %s (pod %s, since %s) of the group's current run", h.lock.kind(), h.lock.name, group, h.holder.Pod,
		h.holder.Since.Format(time.RFC3339))
}

// holders lists the holders of the run's locks, each with whether its group is gone or has no
// current run with its pod.
func (c *chaos) holders(ctx context.Context) ([]heldSlot, error) {
	groups := map[client.ObjectKey]*v1alpha1.OaatGroup{}
	for _, ns := range c.namespaces() {
		list := &v1alpha1.OaatGroupList{}
		if err := c.env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			groups[client.ObjectKeyFromObject(&list.Items[i])] = &list.Items[i]
		}
	}
	var out []heldSlot
	for _, l := range c.locks.locks {
		obj := l.empty()
		if err := c.env.Client.Get(ctx, l.key(), obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue // being created again
			}
			return nil, err
		}
		out = append(out, judgeHolders(l, lockHolders(obj), groups)...)
	}
	return out, nil
}

// judgeHolders tells, for each holder of the lock, whether its group is gone or names its pod
// neither as its current run nor as its request (holds); groups are the run's groups by key. A holder of an OaatLock is of the lock's
// namespace, one of a ClusterOaatLock names its namespace.
func judgeHolders(l sharedLock, holders []v1alpha1.LockHolder, groups map[client.ObjectKey]*v1alpha1.OaatGroup) []heldSlot {
	out := make([]heldSlot, 0, len(holders))
	for _, h := range holders {
		key := client.ObjectKey{Namespace: namespace, Name: h.Group}
		if l.cluster {
			key.Namespace = h.Namespace
		}
		g, ok := groups[key]
		out = append(out, heldSlot{lock: l, holder: h, gone: !ok, stale: !ok || !holds(h, g)})
	}
	return out
}

// holds reports whether the group (of the holder's UID) names the holder's pod as its current run
// or as its request for locks: the slot is its, or granted to it.
func holds(h v1alpha1.LockHolder, g *v1alpha1.OaatGroup) bool {
	if string(g.UID) != h.GroupUID {
		return false
	}
	cr, w := g.Status.CurrentRun, g.Status.LockWait
	return cr != nil && cr.PodName == h.Pod || w != nil && w.Pod == h.Pod
}
