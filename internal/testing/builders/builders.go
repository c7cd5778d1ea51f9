// Package builders makes the objects of tests: OaatGroups, OaatTypes, OaatLocks,
// ClusterOaatLocks, their holders and pods, each from a function or from a wrapper whose methods
// set one thing and return the wrapper (after jobset's pkg/util/testing/wrappers.go), so that a
// test spells only what matters to it and compares whole values (EquateTimes is the cmp option
// for times read back from an API server). It is for tests only: depguard keeps product code
// from importing it. The planner's Plans are built in the planner's own tests, since this package
// cannot import the planner that its tests are part of; nor can podbuild's own tests use it, as
// it builds item pods with podbuild.
package builders

import (
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// T0 is the tests' reference time, a Saturday noon in UTC.
var T0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// EquateTimes is the option of cmp.Diff that compares API times by their instant: a time read
// back from an API server is stored to the second and comes back in no particular location.
var EquateTimes = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// At is the time d after T0, as an API time.
func At(d time.Duration) *metav1.Time {
	t := metav1.NewTime(T0.Add(d))
	return &t
}

// GroupWrapper builds an OaatGroup.
type GroupWrapper struct{ *v1alpha1.OaatGroup }

// Group is the OaatGroup "backups" of namespace "ns" (UID "backups-uid", generation 1) of the
// OaatType "sleeper" with the items, frequency 1h and no status.
func Group(items ...string) *GroupWrapper {
	return &GroupWrapper{&v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: "ns", UID: types.UID("backups-uid"), Generation: 1},
		Spec:       v1alpha1.OaatGroupSpec{OaatType: "sleeper", OaatItems: items, Frequency: "1h"},
	}}
}

// WrapGroup wraps g, to change it in place.
func WrapGroup(g *v1alpha1.OaatGroup) *GroupWrapper { return &GroupWrapper{g} }

// Obj is the group built.
func (w *GroupWrapper) Obj() *v1alpha1.OaatGroup { return w.OaatGroup }

// Named sets the group's name, and its UID to the name followed by "-uid".
func (w *GroupWrapper) Named(name string) *GroupWrapper {
	w.Name, w.OaatGroup.UID = name, types.UID(name+"-uid")
	return w
}

// Namespace sets the group's namespace.
func (w *GroupWrapper) Namespace(ns string) *GroupWrapper {
	w.OaatGroup.Namespace = ns
	return w
}

// Locks sets spec.locks.
func (w *GroupWrapper) Locks(names ...string) *GroupWrapper {
	w.Spec.Locks = names
	return w
}

// ClusterLocks sets spec.clusterLocks.
func (w *GroupWrapper) ClusterLocks(names ...string) *GroupWrapper {
	w.Spec.ClusterLocks = names
	return w
}

// WaitingForLocks makes status.lockWait say that the group waits for the locks (spec.locks when
// none are given), from the time given.
func (w *GroupWrapper) WaitingForLocks(since *metav1.Time, locks ...string) *GroupWrapper {
	if len(locks) == 0 {
		locks = w.Spec.Locks
	}
	w.Status.LockWait = &v1alpha1.LockWait{Since: *since, Locks: locks}
	return w
}

// RunningIn makes status.currentRun say that item runs in the named pod since start, for a
// test whose pod is not named as the operator names it (Running names it so).
func (w *GroupWrapper) RunningIn(item, pod string, start *metav1.Time) *GroupWrapper {
	w.Status.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: pod, StartedAt: *start}
	return w
}

// UID sets the group's UID.
func (w *GroupWrapper) UID(uid string) *GroupWrapper {
	w.OaatGroup.UID = types.UID(uid)
	return w
}

// Created sets the group's creationTimestamp to d after T0.
func (w *GroupWrapper) Created(d time.Duration) *GroupWrapper {
	w.CreationTimestamp = *At(d)
	return w
}

// Generation sets metadata.generation, and status.observedGeneration to the same.
func (w *GroupWrapper) Generation(gen int64) *GroupWrapper {
	w.OaatGroup.Generation, w.Status.ObservedGeneration = gen, gen
	return w
}

// Frequency sets spec.frequency ("" for the default).
func (w *GroupWrapper) Frequency(f v1alpha1.Duration) *GroupWrapper {
	w.Spec.Frequency = f
	return w
}

// Schedule sets spec.schedule and spec.scheduleTimeZone, and clears spec.frequency: a group runs
// its rounds on a schedule or at a frequency, not both.
func (w *GroupWrapper) Schedule(cron v1alpha1.CronSchedule, timeZone string) *GroupWrapper {
	w.Spec.Schedule, w.Spec.ScheduleTimeZone, w.Spec.Frequency = cron, v1alpha1.TimeZone(timeZone), ""
	return w
}

// Condition sets the status condition of its type, replacing one of the same type.
func (w *GroupWrapper) Condition(c metav1.Condition) *GroupWrapper {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == c.Type {
			w.Status.Conditions[i] = c
			return w
		}
	}
	w.Status.Conditions = append(w.Status.Conditions, c)
	return w
}

// FailureCoolOff sets spec.failureCoolOff.
func (w *GroupWrapper) FailureCoolOff(d v1alpha1.Duration) *GroupWrapper {
	w.Spec.FailureCoolOff = d
	return w
}

// ItemStatus sets the status entries of their items, each replacing one of the same name or
// else added after the others.
func (w *GroupWrapper) ItemStatus(items ...v1alpha1.ItemStatus) *GroupWrapper {
	for _, it := range items {
		if i := slices.IndexFunc(w.Status.Items, func(s v1alpha1.ItemStatus) bool { return s.Name == it.Name }); i >= 0 {
			w.Status.Items[i] = it
		} else {
			w.Status.Items = append(w.Status.Items, it)
		}
	}
	return w
}

// Running makes the status say that run `run` of item runs in its pod since start: runCount,
// currentRun and the item's lastStarted.
func (w *GroupWrapper) Running(item string, run int64, start *metav1.Time) *GroupWrapper {
	w.Status.RunCount = run
	w.Status.CurrentRun = &v1alpha1.CurrentRun{Item: item, PodName: podbuild.Name(w.Name, item, run), StartedAt: *start}
	for i := range w.Status.Items {
		if w.Status.Items[i].Name == item {
			w.Status.Items[i].LastStarted = start
			return w
		}
	}
	w.Status.Items = append(w.Status.Items, v1alpha1.ItemStatus{Name: item, LastStarted: start})
	return w
}

// TypeWrapper builds an OaatType.
type TypeWrapper struct{ v1alpha1.OaatType }

// Type is the OaatType "sleeper" of namespace "ns": a pod of one container "main" of busybox
// whose argument is the item.
func Type() *TypeWrapper {
	return &TypeWrapper{v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "ns"},
		Spec: v1alpha1.OaatTypeSpec{Type: v1alpha1.OaatTypePod, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox", Args: []string{"{{oaat_item}}"}}}},
		}},
	}}
}

// Obj is the OaatType built.
func (w *TypeWrapper) Obj() *v1alpha1.OaatType { return &w.OaatType }

// Namespace sets the type's namespace.
func (w *TypeWrapper) Namespace(ns string) *TypeWrapper {
	w.OaatType.Namespace = ns
	return w
}

// Lock is the OaatLock name of namespace "ns" of the capacity, whose slots the holders hold.
func Lock(name string, capacity int32, holders ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	return &v1alpha1.OaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       v1alpha1.OaatLockSpec{Capacity: capacity},
		Status:     v1alpha1.OaatLockStatus{Holders: holders},
	}
}

// ClusterLock is the ClusterOaatLock name of the capacity, selecting the namespaces labelled
// team=backup, whose slots the holders hold.
func ClusterLock(name string, capacity int32, holders ...v1alpha1.LockHolder) *v1alpha1.ClusterOaatLock {
	return &v1alpha1.ClusterOaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterOaatLockSpec{Capacity: capacity,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "backup"}}},
		Status: v1alpha1.ClusterOaatLockStatus{Holders: holders},
	}
}

// Holder is a lock slot held from the time given by the run of item "x" of group (UID the group
// followed by "-uid") in pod, as an OaatLock stores it (a ClusterOaatLock's also names the
// namespace).
func Holder(group, pod string, since *metav1.Time) v1alpha1.LockHolder {
	return v1alpha1.LockHolder{Group: group, GroupUID: group + "-uid", Item: "x", Pod: pod, Since: *since}
}

// PodWrapper builds a pod.
type PodWrapper struct{ corev1.Pod }

// Pod is the pod name of namespace "ns" (UID its name) of one container "main" of busybox, of
// no group, in phase Pending: a pod the operator did not make (RunPod is one it did).
func Pod(name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Obj is the pod built.
func (w *PodWrapper) Obj() *corev1.Pod { return &w.Pod }

// OfGroup labels the pod as one of the group's (v1alpha1.LabelGroup).
func (w *PodWrapper) OfGroup(group string) *PodWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[v1alpha1.LabelGroup] = group
	return w
}

// UID sets the pod's UID.
func (w *PodWrapper) UID(uid string) *PodWrapper {
	w.Pod.UID = types.UID(uid)
	return w
}

// RunPod is the pod of run `run` of item, as the operator creates it from the template (UID its
// name, phase Pending). It panics when the pod cannot be built: a test's own mistake.
func RunPod(g *v1alpha1.OaatGroup, template corev1.PodTemplateSpec, item string, run int64) *PodWrapper {
	pod, err := podbuild.Build(podbuild.Input{Group: g, Template: template, Item: item, Run: run})
	if err != nil {
		panic("building the pod of a test: " + err.Error())
	}
	pod.UID = types.UID(pod.Name)
	pod.Status.Phase = corev1.PodPending
	return &PodWrapper{*pod}
}

// Value is the pod built, as a value.
func (w *PodWrapper) Value() corev1.Pod { return w.Pod }

// Phase sets status.phase.
func (w *PodWrapper) Phase(phase corev1.PodPhase) *PodWrapper {
	w.Status.Phase = phase
	return w
}

// Finished makes the pod's container "main" terminated with code and reason at end, started at
// T0.
func (w *PodWrapper) Finished(code int32, reason string, end *metav1.Time) *PodWrapper {
	w.Status.StartTime = At(0)
	w.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:  "main",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: *end}},
	}}
	return w
}

// Running makes the pod's phase Running, started at start.
func (w *PodWrapper) Running(start *metav1.Time) *PodWrapper {
	w.Status.Phase, w.Status.StartTime = corev1.PodRunning, start
	return w
}
