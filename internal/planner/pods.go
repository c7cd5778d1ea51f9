package planner

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// pods are a group's pods sorted out for a decision.
type pods struct {
	// current is the pod named by status.currentRun, nil when there is none or it is gone.
	current *corev1.Pod
	// others are all the other pods with the group's label.
	others []*corev1.Pod
	// gone are the pods with the group's label that are deleted without a grace period and have
	// not ended (Gone): kept by a finalizer, they are taken as gone, as they were before the
	// finalizer oaat.io/run-tracking, and only released.
	gone []*corev1.Pod
}

func sortPods(group *v1alpha1.OaatGroup, list []corev1.Pod) pods {
	var p pods
	for i := range list {
		pod := &list[i]
		if podbuild.Gone(pod) {
			p.gone = append(p.gone, pod)
			continue
		}
		if cr := group.Status.CurrentRun; cr != nil && pod.Name == cr.PodName && metav1.IsControlledBy(pod, group) {
			p.current = pod
			continue
		}
		p.others = append(p.others, pod)
	}
	return p
}

// anyLive reports whether a pod of the group other than the current run is live, deleting or
// not: no run may start until it has ended.
func (p pods) anyLive() bool {
	for _, pod := range p.others {
		if !podbuild.Terminal(pod) {
			return true
		}
	}
	return false
}

// ofItem reports whether a pod of the item exists, live, finished or being deleted.
func (p pods) ofItem(item string) bool {
	for _, pod := range append([]*corev1.Pod{p.current}, p.others...) {
		if pod != nil && pod.Annotations[v1alpha1.AnnotationItem] == item {
			return true
		}
	}
	return false
}

// maxRun is the highest run number on the pods with the group's label, the group's own or not
// (pods orphaned by an earlier group of the same name keep their names), so that the next run's
// pod name is free.
func (p pods) maxRun() int64 {
	var highest int64
	for _, pod := range append([]*corev1.Pod{p.current}, p.others...) {
		if pod != nil {
			highest = max(highest, podbuild.RunNumber(pod))
		}
	}
	return highest
}

// disruptedGone reports whether the gone pod of that name was ended by a disruption.
func (p pods) disruptedGone(name string) bool {
	for _, pod := range p.gone {
		if pod.Name == name && podbuild.Disrupted(pod) {
			return true
		}
	}
	return false
}

// untrackPods plans the removal of the finalizer oaat.io/run-tracking from every pod that carries
// it and is not the current run of the status this pass writes: the pod of a run recorded in this
// pass or before, a rogue pod, a pod of an earlier group of the same name. The current run's pod
// keeps it until its outcome is in status, so that a pod evicted or deleted while the operator is
// away stays, ended, until its last state has been read (a pod whose containers still run when
// it is deleted ends by its own grace period, as without the finalizer).
func (d *decision) untrackPods() {
	var current string
	if cr := d.plan.Status.CurrentRun; cr != nil {
		current = cr.PodName
	}
	for _, pod := range append(append([]*corev1.Pod{d.pods.current}, d.pods.others...), d.pods.gone...) {
		if pod != nil && pod.Name != current && podbuild.Tracked(pod) {
			d.plan.Untrack = append(d.plan.Untrack, pod)
		}
	}
}
