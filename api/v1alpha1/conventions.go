package v1alpha1

// This file holds the names of the API that are not fields of a kind, yet are part of its
// contract with users, their tools and alerts: the labels and annotations on item pods (and on
// ConfigMaps that are item sources), the labels of the manager's Deployment, the leader election
// Lease's name, the condition types of an OaatGroup, the reasons of its conditions, of its
// events, of an item's lastReason and of an OaatRun's status, and the wait reasons of an item.
// Their values are wire format: they may be added to, never renamed.
//
// The words these names and the godoc use, one thing each (docs/concepts.md, "Glossary"):
//   - item: a string of a group that one pod works on (OAAT_ITEM).
//   - run: one execution of one item: one pod, numbered by status.runCount (LabelRun);
//     status.currentRun is the run in progress. An OaatRun is an on-demand run, not a run.
//   - on-demand run: an OaatRun, a user's order for one run of an item now, outside the schedule,
//     whose status then follows that run; the run names it (CurrentRun.OaatRun,
//     AnnotationOaatRun).
//   - round: the span in which every item is to succeed once (mode EachOnce, or a schedule);
//     a reset (AnnotationReset) or a schedule's tick starts one.
//   - lock: an OaatLock, a semaphore of capacity slots shared by the groups that name it; a run
//     holds a slot of each of its group's locks while its pod lives.
//   - due, overdue: an item is due once it may run again; it is overdue once it has not succeeded
//     by its deadline (its frequency after its last success, or the start of the round after the
//     one that made it due). A group is not overdue: the work queue ranks groups by how long they
//     have had work due (the queue priority, internal/duepriority); a round that starts before
//     the previous one completed overran it.
//   - hold: a run holds a slot of a lock. An item is not held: it waits, for its WaitReason.
//   - settle: an on-demand run is settled when it is given its final phase.

// Labels and annotations that the operator puts on item pods.
const (
	// LabelManagedBy is the standard label that marks the operator's pods.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy on item pods.
	ManagedByValue = "oaat-operator"
	// LabelGroup holds the name of the OaatGroup a pod runs an item of. A live pod with this
	// label that is not the group's current run is deleted.
	LabelGroup = "oaat.io/group"
	// LabelItem holds the item in a form that is a valid label value; the exact item is in
	// AnnotationItem.
	LabelItem = "oaat.io/item"
	// LabelRun holds the run number of the pod (status.runCount when it was started).
	LabelRun = "oaat.io/run"
	// AnnotationItem holds the exact item a pod runs.
	AnnotationItem = "oaat.io/item"
	// FinalizerRunTracking is on every item pod from its creation until the operator has recorded
	// its run's outcome in the group's status (or the pod is not the group's current run, or its
	// group is gone): a pod evicted or deleted while the operator is away stays, ended, until its
	// last state is read, as the Job controller's batch.kubernetes.io/job-tracking does.
	FinalizerRunTracking = "oaat.io/run-tracking"
	// AnnotationOaatRun holds, on the pod of an on-demand run, the name of the OaatRun it serves.
	AnnotationOaatRun = "oaat.io/oaat-run"
	// AnnotationReset starts a new round of a group when its value changes (any value, for
	// example a timestamp): in mode EachOnce every item runs again until it succeeds once more.
	AnnotationReset = "oaat.io/reset"
	// AnnotationPauseNewJobs is the original oaat-operator's annotation: with the value "true"
	// no new item starts, as with spec.suspend. Other values are ignored.
	AnnotationPauseNewJobs = "pause_new_jobs"
	// LabelItemSource marks a ConfigMap that may be a source of items (spec.oaatItemsFrom): only
	// a ConfigMap with this label set to "true" is read. Without the opt-in, a user allowed to
	// edit OaatGroups but not to read ConfigMaps could copy any ConfigMap of the namespace into
	// the group's status through the operator's rights.
	LabelItemSource = "oaat.io/item-source"
	// EnvItem is the environment variable that holds the item in every container.
	EnvItem = "OAAT_ITEM"
	// LabelPurpose is on the pod of a verification (spec.verify), with PurposeVerify's value; a
	// run's pod has none.
	LabelPurpose = "oaat.io/purpose"
	// EnvSourcePod, EnvSourceFinishedAt, EnvSourceExitCode and EnvSourceResult hold, in every
	// container of a verification's pod, the verified run's pod, when it ended (RFC 3339), its
	// exit code (absent when it had none) and its termination message (at most 1 KiB).
	EnvSourcePod        = "OAAT_SOURCE_POD"
	EnvSourceFinishedAt = "OAAT_SOURCE_FINISHED_AT"
	EnvSourceExitCode   = "OAAT_SOURCE_EXIT_CODE"
	EnvSourceResult     = "OAAT_SOURCE_RESULT"
)

// Labels of the manager's Deployment and of its pods, by which kubectl oaat version finds the operator.
const (
	// LabelName is the standard label of the application's name, NameValue on the manager.
	LabelName = "app.kubernetes.io/name"
	// NameValue is the value of LabelName on the manager's Deployment and pods.
	NameValue = "oaat-operator"
	// LabelControlPlane marks the manager's Deployment and pods, with ControlPlaneValue.
	LabelControlPlane = "control-plane"
	// ControlPlaneValue is the value of LabelControlPlane on the manager's Deployment and pods.
	ControlPlaneValue = "controller-manager"
	// LabelVersion is the standard label of the application's version: the release the manager
	// runs (make's VERSION, which make bundle writes into config/manager and so into the CSV's
	// Deployment), which kubectl oaat version reads, as an image pinned by its digest has no tag
	// to read.
	LabelVersion = "app.kubernetes.io/version"
)

// The label of what the uninstall that keeps the data leaves: install.yaml's CRDs and Namespace.
const (
	// LabelUninstall marks, with UninstallKeep, the objects of the install files that the
	// uninstall keeping the data leaves: `kubectl delete -f install.yaml -l
	// 'oaat.io/uninstall!=keep'` removes the operator and keeps every group, lock and history
	// (docs/install.md).
	LabelUninstall = "oaat.io/uninstall"
	// UninstallKeep is the value of LabelUninstall on the objects the keep-data uninstall leaves.
	UninstallKeep = "keep"
)

// LeaderElectionID is the name of the Lease the manager's replicas elect their leader with, in the
// manager's namespace. The leader election Role grants get and update on this Lease only.
const LeaderElectionID = "oaat-operator.oaat.io"

// Condition types of an OaatGroup.
const (
	// ConditionReady is True when the group's spec is valid and its OaatType is found and usable.
	ConditionReady = "Ready"
	// ConditionRunning is True while an item pod of the group is active.
	ConditionRunning = "Running"
	// ConditionSuspended is True while no new item may start because of spec.suspend or the
	// pause_new_jobs annotation.
	ConditionSuspended = "Suspended"
	// ConditionParked is True while items are parked: after a do-not-retry exit code, or once
	// their failures reached spec.maxConsecutiveFailures.
	ConditionParked = "Parked"
	// ConditionComplete is, in mode EachOnce, True once every item has succeeded in the round.
	ConditionComplete = "Complete"
	// ConditionItemsValid is, for a group with spec.oaatItemsFrom, True when every source was
	// read and every entry is a valid item; False names what was skipped, including items that
	// the OaatType cannot run (an item that would make an invalid claimName), which it reports in
	// a group without sources too.
	ConditionItemsValid = "ItemsValid"
	// ConditionTargetAvailable is, for a group with spec.circuitBreaker, True while its breaker
	// is closed and False while it is open: so many items failed in a row that the target they
	// share is taken to be down.
	ConditionTargetAvailable = "TargetAvailable"
	// ConditionNotified is, for a group whose transitions go to a sink (the cluster-wide sink or
	// spec.notify), True while the sinks take them and False when a delivery fails or
	// spec.notify.sink is not allowed.
	ConditionNotified = "Notified"
	// ConditionVerified is, for a group with spec.verify, True while no item's newest
	// verification failed and False, listing them, while some did.
	ConditionVerified = "Verified"
	// ConditionUnusualRuns is True while the newest run of some items was unusually short or long
	// against the runs the item kept before it (status.items[].recentRunSeconds: under 0.1 or over
	// 3 times their median, with at least 3 runs before it and a median of 10 s or more), listing
	// them, and False once none is; absent until a run first is unusual. It never changes a run's
	// outcome.
	ConditionUnusualRuns = "UnusualRuns"
)

// Reasons of the Ready condition.
const (
	// ReasonReady: the spec is valid and the OaatType found.
	ReasonReady Reason = "Ready"
	// ReasonInvalidSpec: the group's spec cannot be used (for example a malformed duration).
	ReasonInvalidSpec Reason = "InvalidSpec"
	// ReasonOaatTypeNotFound: the OaatType named by spec.oaatType does not exist.
	ReasonOaatTypeNotFound Reason = "OaatTypeNotFound"
	// ReasonInvalidOaatType: the OaatType exists but cannot make a pod.
	ReasonInvalidOaatType Reason = "InvalidOaatType"
	// ReasonPodCreateFailed: the API server refused the item pod.
	ReasonPodCreateFailed Reason = "PodCreateFailed"
	// ReasonLockNotFound: an OaatLock named by spec.locks does not exist.
	ReasonLockNotFound Reason = "LockNotFound"
	// ReasonLockNotPermitted: a ClusterOaatLock named by spec.clusterLocks does not select the
	// group's namespace (its spec.namespaceSelector).
	ReasonLockNotPermitted Reason = "LockNotPermitted"
	// ReasonLockOverCapacity: a lock the group names lists more runs than its capacity, since
	// it counts a live run of the group that it did not list (it was created again, or named by
	// an edit, while the run went on); no group naming it starts until enough of them end. The
	// reason of a Warning event.
	ReasonLockOverCapacity Reason = "LockOverCapacity"
	// ReasonCapacityScheduleInvalid: a window of the lock's spec.capacitySchedule cannot be read
	// (only a lock written past admission has one); the smallest capacity the lock names anywhere
	// is in force until it is fixed. The reason of a Warning event on the lock.
	ReasonCapacityScheduleInvalid Reason = "CapacityScheduleInvalid"
	// ReasonCapacityAdapted: the adaptive capacity of the lock (spec.adaptive) changed: Normal when
	// it grew after fast successes, Warning when a counted failure or a slow run halved it. The
	// reason of an event on the lock.
	ReasonCapacityAdapted Reason = "CapacityAdapted"
	// ReasonLockOptionRefused: the group's spec.lockOptions ask of a lock more than it allows
	// (exclusive holders, slots per run) or more slots than its capacity ever gives.
	ReasonLockOptionRefused Reason = "LockOptionRefused"
	// ReasonStatusRejected: the API server refused the group's new status as invalid; the status
	// shown is the last one written, and nothing starts until a new status can be written.
	ReasonStatusRejected Reason = "StatusRejected"
)

// Reasons of the Running condition.
const (
	// ReasonItemRunning: an item pod is active.
	ReasonItemRunning Reason = "ItemRunning"
	// ReasonIdle: no item pod is active.
	ReasonIdle Reason = "Idle"
)

// Reasons of events and of ItemStatus.lastReason beyond those of Kubernetes itself.
const (
	// ReasonRunSucceeded: an item pod ended in phase Succeeded.
	ReasonRunSucceeded Reason = "RunSucceeded"
	// ReasonRunFailed: an item pod ended in phase Failed, or disappeared.
	ReasonRunFailed Reason = "RunFailed"
	// ReasonRoguePodDeleted: a live pod with the group's labels that is not its current run was
	// deleted.
	ReasonRoguePodDeleted Reason = "RoguePodDeleted"
	// ReasonPodNotFound: the run's pod does not exist (deleted while the operator was away, or
	// never created because the operator stopped between deciding and creating).
	ReasonPodNotFound Reason = "PodNotFound"
	// ReasonDeadlineExceeded: the run took longer than spec.runTimeout (or its item's learned
	// timeout, spec.learnedRunTimeout) and was stopped.
	ReasonDeadlineExceeded Reason = "DeadlineExceeded"
	// ReasonPendingTimeout: no container of the run's pod started within spec.pendingTimeout
	// (unschedulable, a volume that cannot be mounted, an image that cannot be pulled); the run
	// was stopped and counts as a failure.
	ReasonPendingTimeout Reason = "PendingTimeout"
	// ReasonInterrupted: the run was stopped because a blackout window with stopRunning opened;
	// it counts as neither success nor failure.
	ReasonInterrupted Reason = "Interrupted"
	// ReasonDisrupted: the run's pod was ended by a disruption, not by its item: an eviction (a
	// node drain), a preemption, a node's loss or the kubelet's node-pressure eviction (the pod's
	// DisruptionTarget condition, as a Job's podFailurePolicy reads it); like Interrupted, it
	// counts as neither success nor failure, and the item runs again as soon as the group may.
	ReasonDisrupted Reason = "Disrupted"
	// ReasonRunInterrupted: the event of an interrupted run.
	ReasonRunInterrupted Reason = "RunInterrupted"
	// ReasonRunStopping: the operator is deleting the pod of a run it stops.
	ReasonRunStopping Reason = "RunStopping"
	// ReasonItemParked: an item exited with a do-not-retry exit code, or its failures reached
	// spec.maxConsecutiveFailures; it waits for a spec change, a reset or an OaatRun of it.
	ReasonItemParked Reason = "ItemParked"
	// ReasonGroupReset: the oaat.io/reset annotation started a new round.
	ReasonGroupReset Reason = "GroupReset"
)

// Reasons of OaatRun.status.reason beyond the run's own (Completed, Error, DeadlineExceeded...).
const (
	// ReasonGroupNotFound: the OaatGroup the on-demand run names does not exist.
	ReasonGroupNotFound Reason = "GroupNotFound"
	// ReasonUnknownItem: the item is not one of the group's items.
	ReasonUnknownItem Reason = "UnknownItem"
	// ReasonDuplicate: an older on-demand run for the same item of the group is still pending.
	ReasonDuplicate Reason = "Duplicate"
	// ReasonGroupDeleted: the group was deleted while its item ran for the on-demand run.
	ReasonGroupDeleted Reason = "GroupDeleted"
	// ReasonQueued: the on-demand run waits for the group's running item or an older one.
	ReasonQueued Reason = "Queued"
	// ReasonGroupNotReady: the on-demand run waits for the group to become Ready.
	ReasonGroupNotReady Reason = "GroupNotReady"
)

// Reasons of the Suspended, Parked, Complete and ItemsValid conditions.
const (
	// ReasonItemsRead: every source of items was read and every entry used.
	ReasonItemsRead Reason = "ItemsRead"
	// ReasonItemsSkipped: a source could not be read or some entries are not items.
	ReasonItemsSkipped Reason = "ItemsSkipped"
	// ReasonSpecSuspend: spec.suspend is true.
	ReasonSpecSuspend Reason = "SpecSuspend"
	// ReasonPauseAnnotation: the pause_new_jobs annotation is "true".
	ReasonPauseAnnotation Reason = "PauseAnnotation"
	// ReasonResumed: nothing suspends the group any more.
	ReasonResumed Reason = "Resumed"
	// ReasonItemsParked: some items are parked.
	ReasonItemsParked Reason = "ItemsParked"
	// ReasonNoneParked: no item is parked.
	ReasonNoneParked Reason = "NoneParked"
	// ReasonAllSucceeded: every item succeeded in the round (mode EachOnce).
	ReasonAllSucceeded Reason = "AllSucceeded"
	// ReasonItemsPending: some items have not succeeded in the round yet (mode EachOnce).
	ReasonItemsPending Reason = "ItemsPending"
)

// Reasons of the TargetAvailable condition and of the circuit breaker's events
// (spec.circuitBreaker).
const (
	// ReasonBreakerClosed: the breaker is closed, items run as usual; also the reason of the
	// Normal event sent when an open breaker closes (a probe succeeded, the reset annotation
	// changed, or spec.circuitBreaker was removed), about the group, or about the lock whose
	// breaker it is (spec.circuitBreaker: Shared on an OaatLock or a ClusterOaatLock).
	ReasonBreakerClosed Reason = "BreakerClosed"
	// ReasonBreakerOpen: the breaker is open, one item at a time runs as a probe.
	ReasonBreakerOpen Reason = "BreakerOpen"
	// ReasonBreakerOpened: the Warning event sent once when the breaker opens (not per probe),
	// about the group, or about the lock whose breaker it is.
	ReasonBreakerOpened Reason = "BreakerOpened"
)

// Reasons of condition Notified.
const (
	// ReasonSinksReached: the sinks acknowledge what is sent.
	ReasonSinksReached Reason = "SinksReached"
	// ReasonSinkUnreachable: a delivery failed; it is retried, and the transitions wait in
	// status.notifications.pending.
	ReasonSinkUnreachable Reason = "SinkUnreachable"
	// ReasonSinkNotAllowed: spec.notify.sink starts with none of the prefixes the manager allows.
	ReasonSinkNotAllowed Reason = "SinkNotAllowed"
)

// Reasons of condition Verified and of the events of verifications (spec.verify).
const (
	// ReasonVerificationsPassed: no item's newest verification failed.
	ReasonVerificationsPassed Reason = "VerificationsPassed"
	// ReasonVerificationFailed: an item's newest verification failed; also the Warning event of
	// a failed verification.
	ReasonVerificationFailed Reason = "VerificationFailed"
	// ReasonVerificationSucceeded: the event of a successful verification (none with
	// spec.runEvents Failures).
	ReasonVerificationSucceeded Reason = "VerificationSucceeded"
	// ReasonVerificationInterrupted: the event of a verification stopped before it ended (a
	// blackout window, a disruption); it runs again.
	ReasonVerificationInterrupted Reason = "VerificationInterrupted"
)

// Reasons of condition UnusualRuns and of the events of an unusual run.
const (
	// ReasonRunsUnusual: the newest run of some items was unusually short or long.
	ReasonRunsUnusual Reason = "RunsUnusual"
	// ReasonRunsUsual: no item's newest run is unusual.
	ReasonRunsUsual Reason = "RunsUsual"
	// ReasonRunUnusuallyShort: the Warning event of a run under 0.1 times the median of the
	// item's runs before it (a backup that backed up nothing succeeds fast).
	ReasonRunUnusuallyShort Reason = "RunUnusuallyShort"
	// ReasonRunUnusuallyLong: the Warning event of a run over 3 times the median of the item's
	// runs before it.
	ReasonRunUnusuallyLong Reason = "RunUnusuallyLong"
)

// WaitReason is an ItemStatus.waitReason: why an item does not start now. Its values are the Wait
// constants (WaitReasons lists them); the CRD keeps the field a plain string, so that a value added
// later is no schema change.
type WaitReason string

// Wait reasons of ItemStatus.waitReason: why an item does not start now.
const (
	// WaitRunning: the item is the group's current run.
	WaitRunning WaitReason = "Running"
	// WaitSucceededRecently: the item succeeded less than frequency ago.
	WaitSucceededRecently WaitReason = "SucceededRecently"
	// WaitCoolingOff: the item failed less than its cool-off ago.
	WaitCoolingOff WaitReason = "CoolingOff"
	// WaitBlackout: a blackout window is open when the item would be eligible.
	WaitBlackout WaitReason = "Blackout"
	// WaitOverrun: the item's expected run time would reach into a blackout window with
	// avoidOverrun.
	WaitOverrun WaitReason = "Overrun"
	// WaitSuspended: the group is suspended.
	WaitSuspended WaitReason = "Suspended"
	// WaitParked: the item is parked until the group's spec changes.
	WaitParked WaitReason = "Parked"
	// WaitDone: in mode EachOnce the item has succeeded in this round.
	WaitDone WaitReason = "Done"
	// WaitLockHeld: the item could start but a lock of spec.locks has no free slot for the group
	// (status.lockWait names it).
	WaitLockHeld WaitReason = "LockHeld"
	// WaitRemoved: the item is no longer one of the group's; its entry goes with its last pod.
	WaitRemoved WaitReason = "Removed"
	// WaitBreakerOpen: the group's circuit breaker is open and the next probe is not due yet
	// (status.circuitBreaker.nextProbeAt).
	WaitBreakerOpen WaitReason = "BreakerOpen"
)
