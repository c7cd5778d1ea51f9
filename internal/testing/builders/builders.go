// Package builders makes the objects of tests: OaatGroups, OaatTypes and item pods, each from a
// wrapper whose methods set one thing and return the wrapper (after jobset's
// pkg/util/testing/wrappers.go), so that a test spells only what matters to it and compares whole
// values. It is for tests only: depguard keeps product code from importing it. The planner's
// Plans are built in the planner's own tests, since this package cannot import the planner that
// its tests are part of.
package builders

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// T0 is the tests' reference time, a Saturday noon in UTC.
var T0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// At is the time d after T0, as an API time.
func At(d time.Duration) *metav1.Time {
	t := metav1.NewTime(T0.Add(d))
	return &t
}

// GroupWrapper builds an OaatGroup.
type GroupWrapper struct{ *v1alpha1.OaatGroup }

// Group is the OaatGroup "backups" of namespace "ns" (UID "group-uid", generation 1) of the
// OaatType "sleeper" with the items, frequency 1h and no status.
func Group(items ...string) *GroupWrapper {
	return &GroupWrapper{&v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: "ns", UID: types.UID("group-uid"), Generation: 1},
		Spec:       v1alpha1.OaatGroupSpec{OaatType: "sleeper", OaatItems: items, Frequency: "1h"},
	}}
}

// WrapGroup wraps g, to change it in place.
func WrapGroup(g *v1alpha1.OaatGroup) *GroupWrapper { return &GroupWrapper{g} }

// Obj is the group built.
func (w *GroupWrapper) Obj() *v1alpha1.OaatGroup { return w.OaatGroup }

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

// FailureCoolOff sets spec.failureCoolOff.
func (w *GroupWrapper) FailureCoolOff(d v1alpha1.Duration) *GroupWrapper {
	w.Spec.FailureCoolOff = d
	return w
}

// ItemStatus sets the status entry of its item, replacing one of the same name.
func (w *GroupWrapper) ItemStatus(it v1alpha1.ItemStatus) *GroupWrapper {
	for i := range w.Status.Items {
		if w.Status.Items[i].Name == it.Name {
			w.Status.Items[i] = it
			return w
		}
	}
	w.Status.Items = append(w.Status.Items, it)
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

// PodWrapper builds an item pod.
type PodWrapper struct{ corev1.Pod }

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
