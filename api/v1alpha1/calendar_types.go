package v1alpha1

// CronSchedule is a cron expression in the syntax of a Kubernetes CronJob's schedule: five fields
// (minute, hour, day-of-month, month, day-of-week; numbers, names such as Mon or Jan, *, ranges,
// lists and steps) or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly. Admission checks the shape; the operator reads the values, and a value out of range
// makes the group not Ready with reason InvalidSpec, naming the field.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=128
// +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9A-Za-z*?/,-]+( +[0-9A-Za-z*?/,-]+){4})$')",messageExpression=`'"' + self + '" is not a cron schedule: use five fields such as "0 1 * * *" (minute hour day-of-month month day-of-week) or one of @yearly, @monthly, @weekly, @daily, @hourly; the time zone goes in spec.scheduleTimeZone'`
type CronSchedule string

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
	ReasonRoundOverrun = "RoundOverrun"
	// ReasonRoundCompleted: every item of the round has succeeded since its tick.
	ReasonRoundCompleted = "RoundCompleted"
	// WaitNextTick: with spec.schedule, the item has succeeded since the current round's tick
	// (or no tick has come since the group was created); it is due again at the next round, at
	// nextEligibleAt.
	WaitNextTick WaitReason = "NextTick"
)
