// Package statusview renders the status of OaatGroups and OaatRuns for people: one table per
// group, one row per item, with the group's on-demand runs under it, and one line per state of
// an OaatRun; and the versions of the plugin and of the operators a cluster runs. It is pure; the
// time is passed in so that ages are reproducible.
package statusview

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Write writes the group's heading, the line of its circuit breaker if it has one (see Breaker),
// and item table to w, then the line of its on-demand runs
// that wait or run (see OnDemand), if any. runs are the group's OaatRuns, in any phase and order.
func Write(w io.Writer, g *v1alpha1.OaatGroup, runs []v1alpha1.OaatRun, now time.Time) error {
	if _, err := fmt.Fprintf(w, "%s/%s  type=%s  %s  failureCoolOff=%s  %s\n",
		g.Namespace, g.Name, g.Spec.OaatType, timing(g, now), orNone(string(g.Spec.FailureCoolOff)), Summary(g)); err != nil {
		return err
	}
	if line := Breaker(g, now); line != "" {
		if _, err := fmt.Fprintf(w, "  circuit breaker: %s\n", line); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	verifies := g.Spec.Verify != nil
	fmt.Fprintln(tw, "  ITEM\tRUNNING\tLAST SUCCESS\tLAST FAILURE\tFAILURES\tLAST RESULT\t"+column(verifies, "VERIFIED\t")+"NEXT")
	for _, it := range g.Status.Items {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s%s\n",
			Item(it.Name), running(g, it.Name, now), ago(it.LastSuccess, now), ago(it.LastFailure, now), it.FailureCount, result(it),
			column(verifies, verified(it, now)+"\t"), next(it, now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if line := OnDemand(runs); line != "" {
		_, err := fmt.Fprintf(w, "  on demand: %s\n", line)
		return err
	}
	return nil
}

// Summary says in a few words what the group is doing: its readiness, the locks it waits for and
// what runs.
func Summary(g *v1alpha1.OaatGroup) string {
	ready := "ready=unknown"
	for _, c := range g.Status.Conditions {
		if c.Type == v1alpha1.ConditionReady {
			ready = "ready=" + string(c.Status)
			if c.Status != metav1.ConditionTrue {
				ready += " (" + c.Reason + ": " + Item(c.Message) + ")"
			}
		}
	}
	for _, c := range g.Status.Conditions {
		if c.Status == metav1.ConditionTrue && (c.Type == v1alpha1.ConditionSuspended || c.Type == v1alpha1.ConditionComplete ||
			c.Type == v1alpha1.ConditionParked || c.Type == v1alpha1.ConditionRoundOverrun) {
			ready += "  " + strings.ToLower(c.Type) + " (" + c.Reason + ")"
		}
	}
	if cb := g.Status.CircuitBreaker; cb != nil && cb.State == v1alpha1.BreakerOpen {
		ready += "  circuitBreaker=Open"
	}
	if w := g.Status.LockWait; w != nil {
		ready += "  waiting for " + Item(v1alpha1.DescribeLocks(w.Locks)) + waitNote(g, w)
	}
	if cr := g.Status.CurrentRun; cr != nil {
		return fmt.Sprintf("%s  running=%s", ready, Item(cr.Item))
	}
	return ready + "  running=none"
}

// waitNote says what orders the group's request beyond its time: a promotion, or its priority as
// its locks honour it, and when they honour less than spec.priority asks, that they bound it.
func waitNote(g *v1alpha1.OaatGroup, w *v1alpha1.LockWait) string {
	switch asked := g.Spec.PriorityOrZero(); {
	case w.PromotedAt != nil:
		return " (promoted: passed over " + strconv.Itoa(v1alpha1.PassLimit) + " times)"
	case w.Priority < asked:
		return fmt.Sprintf(" (priority %d of the %d asked: the locks' spec.maxPriority)", w.Priority, asked)
	case w.Priority > 0:
		return fmt.Sprintf(" (priority %d)", w.Priority)
	}
	return ""
}

func running(g *v1alpha1.OaatGroup, item string, now time.Time) string {
	cr := g.Status.CurrentRun
	if cr == nil || cr.Item != item {
		return ""
	}
	if cr.Purpose == v1alpha1.PurposeVerify {
		return fmt.Sprintf("verifying, %s in %s", age(cr.StartedAt.Time, now), cr.PodName)
	}
	return fmt.Sprintf("yes, %s in %s", age(cr.StartedAt.Time, now), cr.PodName)
}

// column is text in a group whose table has the column, else nothing.
func column(has bool, text string) string {
	if !has {
		return ""
	}
	return text
}

// verified says how old the item's newest verified result is (spec.verify): the age of the run
// its newest successful verification verified, and that the newest verification failed.
func verified(it v1alpha1.ItemStatus, now time.Time) string {
	text := "never"
	if it.VerifiedRunFinishedAt != nil {
		text = "result of " + ago(it.VerifiedRunFinishedAt, now)
	}
	if it.VerificationFailing() {
		text = "FAILED " + ago(it.LastVerifyFailure, now) + "; " + text
	}
	return text
}

// next says when the item may start and why not before: "now", "in 5m (CoolingOff)", or the
// reason alone when no time ends the wait (Running, Suspended, Parked, Done).
func next(it v1alpha1.ItemStatus, now time.Time) string {
	switch {
	case it.NextEligibleAt != nil && it.NextEligibleAt.After(now):
		return fmt.Sprintf("in %s (%s)", age(now, it.NextEligibleAt.Time), it.WaitReason)
	case it.NextEligibleAt == nil && it.WaitReason != "":
		return string(it.WaitReason)
	}
	return "now"
}

func ago(t *metav1.Time, now time.Time) string {
	if t == nil {
		return "never"
	}
	return age(t.Time, now) + " ago"
}

func age(t, now time.Time) string {
	return duration.HumanDuration(now.Sub(t))
}

func result(it v1alpha1.ItemStatus) string {
	if it.LastReason == "" {
		return ""
	}
	if it.LastExitCode == nil {
		return it.LastReason
	}
	return it.LastReason + " (exit " + strconv.Itoa(int(*it.LastExitCode)) + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
