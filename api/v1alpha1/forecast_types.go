package v1alpha1

// Condition type and reasons of the forecast (docs/forecast.md): what the planner's own decision,
// played forward on a simulated clock with every run succeeding in its expected time, says of the
// items' next successes and of the round's end.
const (
	// ConditionAtRisk is True when the forecast predicts that an item will succeed only after it
	// goes overdue (its last success plus three times spec.frequency, where the OaatItemOverdue
	// alert's expression turns true), or that the current round will end only after the next
	// tick or after a blackout window that it waits for has begun; False when every deadline the
	// forecast reaches is met. The forecast is made again when a run ends or the spec changes.
	ConditionAtRisk = "AtRisk"
	// ReasonItemLate: an item's predicted next success falls after it would go overdue.
	ReasonItemLate Reason = "ItemLate"
	// ReasonRoundLate: the round's predicted end falls after the next tick (spec.schedule): the
	// rounds would merge (RoundOverrun).
	ReasonRoundLate Reason = "RoundLate"
	// ReasonRoundInBlackout: the round's items would still be pending when a blackout window
	// opens, so the round waits for its end.
	ReasonRoundInBlackout Reason = "RoundInBlackout"
	// ReasonOnTime: every deadline the forecast reaches is met.
	ReasonOnTime Reason = "OnTime"
)
