package v1alpha1

// The enumerations of the API whose values drive the operator's behaviour. Each is a named type,
// so that golangci-lint's exhaustive checks every switch on it and every map keyed by it (a
// switch on one of them has no default case); each has a function that lists its values, which
// the tests walk through the tables that give the values their meaning, and enums_test.go checks
// that each list holds every constant of its type declared in this package.

// StopReason is a CurrentRun.stopReason: why the operator stops a run, or saw it stopped, before
// it ended by itself. It is also the ItemStatus.lastReason of the run it stops (the Reason
// constant of the same value, TestStopReasonsAreLastReasons). What each means (how the run
// counts, the event that announces it) is one table, internal/planner's stopRules. The CRD keeps
// the field a plain string.
type StopReason string

// Stop reasons of CurrentRun.stopReason.
const (
	// StopDeadlineExceeded: the run took longer than spec.runTimeout, or its item's learned timeout
	// (spec.learnedRunTimeout); it counts as a failure.
	StopDeadlineExceeded StopReason = "DeadlineExceeded"
	// StopPendingTimeout: no container of the run's pod started within spec.pendingTimeout; it
	// counts as a failure.
	StopPendingTimeout StopReason = "PendingTimeout"
	// StopInterrupted: a blackout window with stopRunning opened; it counts as neither success
	// nor failure.
	StopInterrupted StopReason = "Interrupted"
	// StopDisrupted: the run's pod was ended by a disruption (an eviction, a preemption, a node's
	// loss); the operator only records it, and it counts as neither success nor failure.
	StopDisrupted StopReason = "Disrupted"
)

// StopReasons returns every StopReason.
func StopReasons() []StopReason {
	return []StopReason{StopDeadlineExceeded, StopPendingTimeout, StopInterrupted, StopDisrupted}
}

// Reason is a reason the operator gives, in CamelCase: of a condition of its kinds, of an event it
// sends, of an item's status.items[].lastReason when the operator decides how the run ended, or
// of an OaatRun's status.reason. Its values are the Reason constants (Reasons lists them; each is
// documented where it is declared, and the reference lists those of conventions.go). The fields
// that hold one stay plain strings in the CRDs, since some also hold reasons of Kubernetes itself
// (a container's Error, OOMKilled or Completed). Code that gives a reason takes this type, so that
// a reason is one of the constants, not a string written where it is used.
type Reason string

// Reasons returns every Reason.
func Reasons() []Reason {
	return []Reason{
		ReasonRoundOverrun, ReasonRoundCompleted, ReasonReady, ReasonInvalidSpec,
		ReasonOaatTypeNotFound, ReasonInvalidOaatType, ReasonPodCreateFailed, ReasonLockNotFound,
		ReasonLockNotPermitted, ReasonLockOverCapacity, ReasonCapacityScheduleInvalid, ReasonCapacityAdapted, ReasonLockOptionRefused, ReasonStatusRejected, ReasonItemRunning,
		ReasonIdle, ReasonRunSucceeded, ReasonRunFailed, ReasonRoguePodDeleted, ReasonPodNotFound,
		ReasonDeadlineExceeded, ReasonPendingTimeout, ReasonInterrupted, ReasonDisrupted,
		ReasonRunInterrupted, ReasonRunStopping, ReasonItemParked, ReasonGroupReset,
		ReasonGroupNotFound, ReasonUnknownItem, ReasonDuplicate, ReasonGroupDeleted, ReasonQueued,
		ReasonGroupNotReady, ReasonItemsRead, ReasonItemsSkipped, ReasonSpecSuspend,
		ReasonPauseAnnotation, ReasonResumed, ReasonItemsParked, ReasonNoneParked, ReasonAllSucceeded,
		ReasonItemsPending, ReasonBreakerClosed, ReasonBreakerOpen, ReasonBreakerOpened,
		ReasonItemLate, ReasonRoundLate, ReasonRoundInBlackout, ReasonOnTime, ReasonHistoryAdopted,
		ReasonHistoryDiscarded, ReasonItemRenamed, ReasonHistoryRefused, ReasonHistoryLost,
		ReasonSinksReached, ReasonSinkUnreachable, ReasonSinkNotAllowed, ReasonVerificationsPassed,
		ReasonVerificationFailed, ReasonVerificationSucceeded, ReasonVerificationInterrupted,
		ReasonRunsUnusual, ReasonRunsUsual, ReasonRunUnusuallyShort, ReasonRunUnusuallyLong,
	}
}

// WaitReasons returns every WaitReason.
func WaitReasons() []WaitReason {
	return []WaitReason{WaitRunning, WaitSucceededRecently, WaitCoolingOff, WaitBlackout, WaitOverrun,
		WaitSuspended, WaitParked, WaitDone, WaitLockHeld, WaitRemoved, WaitBreakerOpen, WaitNextTick}
}

// RunResult is how a run ended, as the run metrics label it (result) and the outcome of a run
// records it; an on-demand run's final phase and the circuit breaker follow it.
type RunResult string

// Results of a run.
const (
	// ResultSucceeded means the pod succeeded, or failed only with exit codes of
	// spec.exitCodes.success.
	ResultSucceeded RunResult = "succeeded"
	// ResultFailed means the pod failed, disappeared, or was stopped for a StopReason that counts
	// as a failure.
	ResultFailed RunResult = "failed"
	// ResultInterrupted means the run was stopped for a StopReason that counts as neither success
	// nor failure (a blackout window with stopRunning, a disruption).
	ResultInterrupted RunResult = "interrupted"
)

// RunResults returns every RunResult.
func RunResults() []RunResult {
	return []RunResult{ResultSucceeded, ResultFailed, ResultInterrupted}
}
