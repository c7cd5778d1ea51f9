package v1alpha1

// CronSchedule and its admission rules are generated (zz_generated.admission.go, hack/admissiongen).

// DefaultFrequency is the frequency of a group that sets neither spec.frequency nor spec.schedule.
const DefaultFrequency Duration = "1h"

// Condition type, reasons and wait reason of calendar schedules (spec.schedule).
const (
	// ConditionRoundOverrun is, for a group with spec.schedule, True when a tick came while items
	// of the previous round had not yet succeeded: the rounds merged (each item is due once, the
	// late ones first), and False once a round completes before the next tick.
	ConditionRoundOverrun = "RoundOverrun"
	// ReasonRoundOverrun: a tick came before every item of the previous round had succeeded. It is
	// also the reason of the Warning event sent when that happens.
	ReasonRoundOverrun Reason = "RoundOverrun"
	// ReasonRoundCompleted: every item of the round has succeeded since its tick.
	ReasonRoundCompleted Reason = "RoundCompleted"
	// WaitNextTick: with spec.schedule, the item has succeeded since the current round's tick
	// (or no tick has come since the group was created); it is due again at the next round, at
	// nextEligibleAt.
	WaitNextTick WaitReason = "NextTick"
)
