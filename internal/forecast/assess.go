package forecast

import (
	"slices"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// Risk is a deadline the forecast predicts to be missed.
type Risk struct {
	// Reason is ReasonItemLate, ReasonRoundLate or ReasonRoundInBlackout.
	Reason v1alpha1.Reason
	// Item is the late item (ReasonItemLate); empty for a round.
	Item string
	// Deadline is the instant missed.
	Deadline time.Time
	// Predicted is the predicted success of the item or end of the round; zero when the forecast
	// predicts none before it ended.
	Predicted time.Time
}

// Assess lists the deadlines that the forecast of group predicts to be missed, earliest first:
//   - without spec.schedule, each item due at the forecast's start (not done in its round, not
//     parked) must succeed before its last success (or the group's creation) plus three times
//     spec.frequency, when the OaatItemOverdue alert's expression turns true;
//   - a round must end before the next round starts (spec.schedule) and before its pending items
//     begin to wait for a blackout window.
//
// A deadline beyond what the forecast reached is not judged.
func Assess(group *v1alpha1.OaatGroup, f Forecast) []Risk {
	reached := f.Until
	if f.Stop == StopPassLimit || f.Stop == StopAssessed {
		reached = f.ReachedAt
	}
	var risks []Risk
	if group.Spec.Schedule == "" {
		risks = itemRisks(group, f, reached)
	}
	for _, r := range f.Rounds {
		switch {
		case r.Overrun || (!r.NextRoundAt.IsZero() && (r.EndsAt.After(r.NextRoundAt) || r.EndsAt.IsZero() && r.NextRoundAt.Before(reached))):
			risks = append(risks, Risk{Reason: v1alpha1.ReasonRoundLate, Deadline: r.NextRoundAt, Predicted: r.EndsAt})
		case !r.BlackoutAt.IsZero():
			risks = append(risks, Risk{Reason: v1alpha1.ReasonRoundInBlackout, Deadline: r.BlackoutAt, Predicted: r.EndsAt})
		}
	}
	slices.SortStableFunc(risks, func(a, b Risk) int { return a.Deadline.Compare(b.Deadline) })
	return risks
}

// itemRisks are the items predicted to succeed only after they go overdue.
func itemRisks(group *v1alpha1.OaatGroup, f Forecast, reached time.Time) []Risk {
	frequency, err := groupspec.Frequency(group)
	if err != nil {
		return nil // not Ready: the condition says why
	}
	var risks []Risk
	for _, it := range f.Start.Items {
		if heldAtStart(it.WaitReason) {
			continue
		}
		base := group.CreationTimestamp.Time
		if it.LastSuccess != nil {
			base = it.LastSuccess.Time
		}
		if base.IsZero() {
			continue // a group not created yet (a dry run) has no deadline
		}
		deadline := groupspec.OverdueAlertAt(base, frequency)
		success, ok := f.NextSuccess(it.Name)
		if (ok && success.After(deadline)) || (!ok && deadline.Before(reached)) {
			risks = append(risks, Risk{Reason: v1alpha1.ReasonItemLate, Item: it.Name, Deadline: deadline, Predicted: success})
		}
	}
	return risks
}
