package planner

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
)

// Notify is what the planner knows of the sinks the group's transitions go to.
type Notify struct {
	// ClusterSink says that the manager has a cluster-wide sink (--notify-sink).
	ClusterSink bool
	// GroupSinkPrefixes are the URL prefixes a group's own sink (spec.notify.sink) may start
	// with (--notify-group-sink-prefixes); none means no group may have a sink of its own.
	GroupSinkPrefixes []string
	// Delivery is the notifier's last report on the group, nil when it has none.
	Delivery *Delivery
}

// Delivery is the notifier's report on a group's transitions.
type Delivery struct {
	// UID is the group's UID the report is about: a report on an earlier group of the same name
	// is not taken.
	UID string
	// Acked is the highest sequence number that every sink of the group acknowledged.
	Acked int64
	// Failure is the last delivery's error since the last acknowledgment, empty when none.
	Failure string
}

// groupSinkAllowed reports whether the group's own sink is one the manager may send to.
func (n Notify) groupSinkAllowed(spec *v1alpha1.Notify) bool {
	return spec != nil && SinkAllowed(spec.Sink, n.GroupSinkPrefixes)
}

// SinkAllowed reports whether a group's sink starts with one of the prefixes allowed.
func SinkAllowed(sink string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(prefix string) bool { return strings.HasPrefix(sink, prefix) })
}

// recordTransitions writes the pass's transitions into the group's outbox
// (status.notifications) when a sink takes them, empties it up to what the sinks acknowledged
// (Input.Notify.Delivery), and says in condition Notified whether the sinks take them.
func (d *decision) recordTransitions() {
	n := d.in.Notify
	spec := d.group.Spec.Notify
	groupSink := n.groupSinkAllowed(spec)
	if !n.ClusterSink && !groupSink {
		d.plan.Status.Notifications = dropPending(d.plan.Status.Notifications)
		if spec != nil {
			d.setCondition(v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkNotAllowed, fmt.Sprintf(
				"spec.notify.sink %q starts with none of the prefixes the manager allows (--notify-group-sink-prefixes): nothing is sent", spec.Sink))
		} else {
			meta.RemoveStatusCondition(&d.plan.Status.Conditions, v1alpha1.ConditionNotified)
		}
		return
	}
	out := d.plan.Status.Notifications
	transitions := d.transitions()
	if out == nil && len(transitions) > 0 {
		out = &v1alpha1.NotificationsStatus{}
	}
	if out == nil {
		d.setNotified(groupSink && !n.ClusterSink, spec)
		return
	}
	if del := n.Delivery; del != nil && del.UID == string(d.group.UID) {
		acknowledge(out, del.Acked)
	}
	for _, t := range transitions {
		t.Seq = out.Next
		out.Next++
		out.Pending = append(out.Pending, t)
	}
	if over := len(out.Pending) - v1alpha1.MaxPendingNotifications; over > 0 {
		out.Pending = append(out.Pending[:0:0], out.Pending[over:]...)
		out.Dropped += int64(over)
	}
	if len(out.Pending) == 0 {
		out.Pending = nil
	}
	d.plan.Status.Notifications = out
	d.setNotified(groupSink && !n.ClusterSink, spec)
}

// setNotified writes condition Notified from the notifier's report.
func (d *decision) setNotified(groupOnly bool, spec *v1alpha1.Notify) {
	if del := d.in.Notify.Delivery; del != nil && del.UID == string(d.group.UID) && del.Failure != "" {
		text := fmt.Sprintf("%d transitions wait to be sent: %s", pending(d.plan.Status.Notifications), del.Failure)
		if c := meta.FindStatusCondition(d.group.Status.Conditions, v1alpha1.ConditionNotified); c == nil || c.Reason != string(v1alpha1.ReasonSinkUnreachable) {
			d.event(corev1.EventTypeWarning, v1alpha1.ReasonSinkUnreachable, text+droppedNote(d.plan.Status.Notifications))
		}
		d.setCondition(v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkUnreachable, text+droppedNote(d.plan.Status.Notifications))
		return
	}
	text := "The transitions go to the cluster-wide sink"
	switch {
	case groupOnly:
		text = fmt.Sprintf("The transitions go to %s", spec.Sink)
	case d.in.Notify.groupSinkAllowed(spec):
		text = fmt.Sprintf("The transitions go to the cluster-wide sink and to %s", spec.Sink)
	}
	d.setCondition(v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached, text+droppedNote(d.plan.Status.Notifications))
}

// droppedNote is what condition Notified adds when transitions were dropped unsent.
func droppedNote(out *v1alpha1.NotificationsStatus) string {
	if out == nil || out.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf("; %d transitions were dropped unsent (the outbox keeps the last %d)", out.Dropped, v1alpha1.MaxPendingNotifications)
}

func pending(out *v1alpha1.NotificationsStatus) int {
	if out == nil {
		return 0
	}
	return len(out.Pending)
}

// acknowledge removes from the outbox the transitions up to acked.
func acknowledge(out *v1alpha1.NotificationsStatus, acked int64) {
	keep := out.Pending[:0]
	for _, t := range out.Pending {
		if t.Seq > acked {
			keep = append(keep, t)
		}
	}
	out.Pending = keep
}

// dropPending empties the outbox of a group without a sink, keeping its sequence (a CloudEvent's
// id is never given twice) and its count of dropped transitions.
func dropPending(out *v1alpha1.NotificationsStatus) *v1alpha1.NotificationsStatus {
	if out == nil {
		return nil
	}
	out.Pending = nil
	return out
}

// transitions are the changes this pass makes that are sent: runs and verifications that failed,
// items parked, the breaker opening or closing, condition AtRisk turning True.
func (d *decision) transitions() []v1alpha1.Transition {
	var out []v1alpha1.Transition
	add := func(event v1alpha1.NotifyEvent, item string, reason string, text string) {
		out = append(out, v1alpha1.Transition{
			Event: event, Item: item, Time: d.stamp, Reason: message.Truncate(reason, v1alpha1.MaxNotificationReason),
			Message: message.Truncate(text, v1alpha1.MaxNotificationMessage),
		})
	}
	before := make(map[string]*v1alpha1.ItemStatus, len(d.group.Status.Items))
	for i := range d.group.Status.Items {
		before[d.group.Status.Items[i].Name] = &d.group.Status.Items[i]
	}
	st := &d.plan.Status
	for _, o := range d.plan.Finished {
		if o.Result != v1alpha1.ResultFailed {
			continue
		}
		it := d.item(o.Item)
		add(v1alpha1.NotifyRunFailed, o.Item, it.LastReason, fmt.Sprintf("The run of item %q in pod %s failed (%s)", o.Item, it.LastPodName, it.LastReason))
	}
	for _, o := range d.plan.Verified {
		if o.Result == v1alpha1.ResultFailed {
			add(v1alpha1.NotifyVerificationFailed, o.Item, o.Reason, fmt.Sprintf("The verification of item %q failed (%s)", o.Item, o.Reason))
		}
	}
	for i := range st.Items {
		it := &st.Items[i]
		if was := before[it.Name]; it.ParkedGeneration != 0 && (was == nil || was.ParkedGeneration != it.ParkedGeneration) {
			add(v1alpha1.NotifyItemParked, it.Name, string(v1alpha1.ReasonItemParked),
				fmt.Sprintf("Item %q is parked after %d failures in a row (%s)", it.Name, it.FailureCount, it.LastReason))
		}
	}
	switch was, is := breakerOpen(d.group.Status.CircuitBreaker), breakerOpen(st.CircuitBreaker); {
	case is && !was:
		add(v1alpha1.NotifyBreakerOpened, "", string(v1alpha1.ReasonBreakerOpened), "The circuit breaker opened: items fail in a row")
	case was && !is:
		add(v1alpha1.NotifyBreakerClosed, "", string(v1alpha1.ReasonBreakerClosed), "The circuit breaker closed")
	}
	was := meta.IsStatusConditionTrue(d.group.Status.Conditions, v1alpha1.ConditionAtRisk)
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionAtRisk); !was && c != nil && c.Status == metav1.ConditionTrue {
		add(v1alpha1.NotifyAtRisk, "", c.Reason, c.Message)
	}
	return out
}

func breakerOpen(b *v1alpha1.CircuitBreakerStatus) bool {
	return b != nil && b.State == v1alpha1.BreakerOpen
}
