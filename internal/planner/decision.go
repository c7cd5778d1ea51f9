package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/itemsource"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// decision is the work area of Decide: the input, the pods sorted out, and the plan being made.
type decision struct {
	in    Input
	group *v1alpha1.OaatGroup
	pods  pods
	// stamp is the decision time as status stores it (whole seconds), so that what is written is
	// exactly what is read back.
	stamp metav1.Time
	// policy is the group's spec as read for decisions; policyErr says why it cannot be used.
	policy    policy
	policyErr error
	plan      Plan
	// queue are the group's valid pending on-demand runs, oldest first, once reviewed.
	queue []*v1alpha1.OaatRun
	// items are the group's items, from its spec and its sources, but those the OaatType cannot
	// run; itemSet holds the same; itemProblems say what was skipped.
	items        []string
	itemSet      map[string]bool
	itemProblems []string
	// lockBlocked says that a run could not start for want of a lock's slot.
	lockBlocked bool
	// rejected is the Ready condition saying StatusRejected whose retry wait is over (checkReady):
	// a pass that then only asks its locks keeps it (keepRejected), so that the write of the
	// request does not reset the refusal's age, which paces the retries.
	rejected *metav1.Condition
	// superseded are the finished pods beyond spec.podHistory of items still in the group
	// (pruneHistory), which batchSuperseded deletes together or lets wait.
	superseded []*corev1.Pod
}

func newDecision(in Input) *decision {
	d := &decision{
		in:    in,
		group: in.Group,
		pods:  sortPods(in.Group, in.Pods),
		stamp: metav1.NewTime(in.Now.Truncate(time.Second)),
	}
	d.policy, d.policyErr = readPolicy(in.Group)
	d.carriedBreakerPolicy()
	d.items, d.itemProblems = itemsource.Resolve(&in.Group.Spec, itemsource.Objects{ConfigMaps: in.ConfigMaps, Claims: in.Claims})
	d.items, d.itemProblems = fitItems(in.Type, d.items, d.itemProblems)
	d.itemSet = make(map[string]bool, len(d.items))
	for _, item := range d.items {
		d.itemSet[item] = true
	}
	d.plan.now = in.Now
	d.plan.Status = *in.Group.Status.DeepCopy()
	d.plan.Status.ObservedGeneration = in.Group.Generation
	d.plan.Status.ItemCount = int32(len(d.items))
	return d
}

func (d *decision) event(eventType string, reason v1alpha1.Reason, text string) {
	d.plan.Events = append(d.plan.Events, Event{Type: eventType, Reason: reason, Message: message.Event(text)})
}

// wakeUp is the earliest of the instants at which the steps ask to look at the group again,
// though nothing changes.
type wakeUp struct {
	// earliest is that instant, zero while no step asks.
	earliest time.Time
}

// at keeps t if it is earlier than the instant kept; a zero t asks nothing.
func (w *wakeUp) at(t time.Time) {
	if !t.IsZero() && (w.earliest.IsZero() || t.Before(w.earliest)) {
		w.earliest = t
	}
}

// after is how long from now to the wake-up: zero for none, a second for an instant that has
// passed already, else exactly until it: a floor of a second on every wake-up would start an item
// that a reconcile saw just before its eligibility up to a second late.
func (w wakeUp) after(now time.Time) time.Duration {
	switch after := w.earliest.Sub(now); {
	case w.earliest.IsZero():
		return 0
	case after <= 0:
		return time.Second
	default:
		return after
	}
}

// item returns the status entry of the item, adding it when missing.
func (d *decision) item(name string) *v1alpha1.ItemStatus {
	st := &d.plan.Status
	for i := range st.Items {
		if st.Items[i].Name == name {
			return &st.Items[i]
		}
	}
	st.Items = append(st.Items, v1alpha1.ItemStatus{Name: name})
	return &st.Items[len(st.Items)-1]
}
