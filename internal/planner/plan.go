package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/locks"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// Input is the snapshot one decision is made from.
type Input struct {
	// Group is the OaatGroup, with the status as last persisted.
	Group *v1alpha1.OaatGroup
	// Type is the OaatType named by the group, nil when it does not exist.
	Type *v1alpha1.OaatType
	// VerifyType is the OaatType named by spec.verify, nil without spec.verify or when it does
	// not exist.
	VerifyType *v1alpha1.OaatType
	// Pods are the pods that carry the group's label, live and finished.
	Pods []corev1.Pod
	// OnDemandRuns are the on-demand runs (OaatRuns) that name the group, in any phase.
	OnDemandRuns []v1alpha1.OaatRun
	// ConfigMaps are the ConfigMaps named by spec.oaatItemsFrom that exist, by name.
	ConfigMaps map[string]*corev1.ConfigMap
	// Claims are the metadata of the namespace's PersistentVolumeClaims when a source of
	// spec.oaatItemsFrom selects claims, else none.
	Claims []metav1.PartialObjectMetadata
	// Now is the time of the decision.
	Now time.Time
	// Rand breaks the last tie of the item selection.
	Rand schedule.Rand
	// Locks are the OaatLocks and ClusterOaatLocks the group names, and the groups waiting for
	// them.
	Locks locks.Input
	// StatusRefusedAt is when this process last tried to write a status of the group that the
	// API server refused as invalid, zero when it has not since the last status it wrote. While
	// Ready says StatusRejected, no run starts (and no lock is asked for one) before the retry
	// wait after that attempt is over: each attempt asks its locks, whose grants wake the group,
	// and would otherwise come about once a second.
	StatusRefusedAt time.Time
	// History is the OaatGroupHistory of the group's namespace and name, which the controller
	// reads while the group lacks the finalizer oaat.io/history (its first pass): nil otherwise,
	// or when there is none.
	History *v1alpha1.OaatGroupHistory
	// AtRisk is condition AtRisk as the forecast made it off the reconcile path (the controller's
	// forecaster, forecast.AtRisk) from an earlier pass of the group, nil when none is made yet.
	// Decide writes it when it is of the group's generation (setAtRisk).
	AtRisk *metav1.Condition
	// Notify is what the manager says of the sinks the group's transitions go to, and the
	// notifier's last report on what they acknowledged (recordTransitions).
	Notify Notify
}

// Plan is what the controller applies, in these phases (controllers.applyPhases; a test holds
// this list, and docs/architecture.md's, to it):
//
//  1. check the start: with a Create, this process still leads and the API server shows no live
//     pod of the group;
//  2. final on-demand statuses: FinalOnDemandRuns;
//  3. persist the status: Status, then emit Events and observe Finished, Probes, RoundOverrun
//     and LocksWaited;
//  4. delete the adopted history: DeleteHistory;
//  5. create the pod and untrack pods: Create, and at the same time remove the finalizer
//     oaat.io/run-tracking from each of Untrack (both need only the status persisted);
//  6. open on-demand runs: OpenOnDemandRuns;
//  7. delete pods: DeleteBatch in one request, each of Delete (then emit its Event);
//  8. add the history finalizer: oaat.io/history, in the group's first pass.
//
// A plan writes no lock: the group's request for its locks is its own status.lockWait, and each
// lock's reconciler alone writes the lock (locks.Decide).
//
// An event is emitted only once the state it reports is persisted. A run's start has no event of
// its own: status.currentRun, the Running condition and the pod say it, and one event per run (its
// outcome) keeps a run's API writes to about four.
type Plan struct {
	// FinalOnDemandRuns are OaatRuns that reach a final phase. They are written before Status, so
	// that once Status no longer names the run of an on-demand run, its OaatRun says how it ended;
	// the controller writes Status only once the update marked EndsRun is written.
	FinalOnDemandRuns []OnDemandRunUpdate
	// Status is the group's new status.
	Status v1alpha1.OaatGroupStatus
	// Events are the events that report Status.
	Events []Event
	// Create is the item pod to create, whose intent Status records.
	Create *corev1.Pod
	// OpenOnDemandRuns are OaatRuns whose Pending or InProgress status changes; they are written
	// after Create, and Status alone says which OaatRun the current run serves, should they be lost.
	OpenOnDemandRuns []OnDemandRunUpdate
	// Delete are pods to delete, each in a request of its own: rogue pods, and the finished pods
	// of items removed from the group (whose status entry goes with the last of them).
	Delete []Deletion
	// DeleteBatch are finished pods beyond spec.podHistory of items still in the group, deleted
	// together in one request (a deletecollection by their run numbers) in this pass: when the
	// group is idle after it, or once supersededBatch of them wait. Empty while they wait: a busy
	// group keeps a few more finished pods than podHistory says, whose runs are recorded already,
	// rather than pay one write per run for them.
	DeleteBatch []*corev1.Pod
	// Untrack are the group's pods that carry the finalizer oaat.io/run-tracking and that Status
	// does not name as its current run: their outcome is recorded (or they are not the group's
	// run), so the finalizer comes off once Status is persisted, one write per run.
	Untrack []*corev1.Pod
	// Finished are the runs whose outcome Status records for the first time.
	Finished []Outcome
	// Verified are the verifications (spec.verify) whose outcome Status records for the first
	// time.
	Verified []Verification
	// Probes are the results of the circuit breaker's probes whose outcome Status records for
	// the first time; the controller counts them once Status is persisted.
	Probes []v1alpha1.RunResult
	// LocksWaited is how long the run that Status starts waited for the locks it holds; nil when
	// no run starts or the group names no lock. The controller observes it once Status is
	// persisted.
	LocksWaited *LocksWaited
	// DeleteHistory is the OaatGroupHistory the group adopted (or found expired, or of another
	// OaatType), deleted once Status is persisted; nil when none.
	DeleteHistory *v1alpha1.OaatGroupHistory
	// RoundOverrun reports that Status starts a scheduled round while items of the previous one
	// had not succeeded; the controller counts it once Status is persisted.
	RoundOverrun bool
	// RequeueAfter is when the group must be looked at again though nothing changes; zero means
	// only when something changes.
	RequeueAfter time.Duration

	// now is the time of the decision, which the fallbacks (fallback.go) are stamped with too.
	now time.Time
}

// Verification is a finished verification (spec.verify).
type Verification struct {
	Outcome
	// Reason says why it ended so: the reason of its first terminated container that explains
	// it, of its pod, or of the operator's stop.
	Reason string
}

// LocksWaited is how long a run waited for its locks.
type LocksWaited struct {
	// Locks are the locks it holds.
	Locks []v1alpha1.Lock
	// Waited is how long it waited for them, from its request's since; zero when every lock
	// listed its request at once.
	Waited time.Duration
}

// Deletion is a pod to delete and why.
type Deletion struct {
	// Pod is the pod; it is deleted only if its UID is still the same.
	Pod *corev1.Pod
	// Event reports the deletion of a rogue pod (a live pod that is not the group's current run);
	// nil for a finished pod superseded by a later run of its item.
	Event *Event
}

// OnDemandRunUpdate is a new status of an on-demand run (an OaatRun).
type OnDemandRunUpdate struct {
	// OnDemandRun is the OaatRun as read; it is updated only if unchanged since.
	OnDemandRun *v1alpha1.OaatRun
	// Status is its new status.
	Status v1alpha1.OaatRunStatus
	// EndsRun marks the final status of the on-demand run whose run Status records as ended: Status
	// must not be written unless this update is, or the run's result would be lost (once Status
	// no longer names the run, only the item's history says how it ended).
	EndsRun bool
}

// Event is an event about the group.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type string
	// Reason is one of the v1alpha1 Reason constants.
	Reason v1alpha1.Reason
	// Message is the event's message.
	Message string
}

// Outcome is a finished run.
type Outcome struct {
	// Item is the item that ran.
	Item string
	// Result is how the run ended.
	Result v1alpha1.RunResult
	// Duration is how long the run took, from the pod's start to its end.
	Duration time.Duration
}

// Decide makes the plan for one reconcile of the group. Its steps share one decision; each reads
// what the steps before it produced, which fixes their order (TestDecideStepTable holds this
// table to Decide's calls):
//
//	step                    reads                                          produces
//	recordCurrentRun        status.currentRun, the run's pod,              the item's outcome and history, Finished, the
//	                        status.circuitBreaker, spec.verify             OaatRun of the run settled; currentRun cleared;
//	                                                                       the breaker's count, opening, probes, closing;
//	                                                                       the verification made due, or one's outcome;
//	                                                                       an unusual run's event
//	carryHistory            Input.History, spec.itemRenames, the items     history adopted from a deleted group's record,
//	                                                                       renamed items' history moved; DeleteHistory
//	deleteRoguePods         live pods, currentRun as recorded              Deletions of pods that are not the current run
//	pruneHistory            finished pods, spec.podHistory                 Deletions of old pods; entries of removed items go
//	syncItems               the resolved items, status.items (recorded)    status.items in the group's order, history kept
//	dropStaleVerification   spec.verify, the items                         pendingVerification dropped when it cannot run
//	setItemsValid           the item sources' read results                 condition ItemsValid
//	reviewOnDemandRuns      open OaatRuns, status.items, recorded outcome  the queue of on-demand runs; rejections, settlements
//	observeReset            oaat.io/reset, status.observedReset            a new round: roundStartedAt, parked items released
//	reconcileBreaker        spec.circuitBreaker, the reset just observed   status.circuitBreaker kept, closed or removed
//	followLockBreakers      status.circuitBreaker, the breakers that       the group's breaker following the locks' breakers
//	                        Input.Locks carry
//	observeTick             spec.schedule, roundStartedAt                  the scheduled round, RoundOverrun, nextRoundAt
//	stopCurrentRun          a run still live, runTimeout, blackouts        stopReason and the pod's deletion, or a wake-up
//	checkReady              the policy, the OaatType, create backoff       condition Ready; whether a run may start
//	startNext               pendingVerification, the queue, items and      the intent (currentRun, runCount), the pod, or the request for locks;
//	                        rounds, Input.Locks, the breaker (an open one  while the breaker is open, the probe or its time
//	                        starts only probes)
//	updateOpenOnDemandRuns  the queue, startNext's choice                  each on-demand run's phase and reason
//	setWaits                items, startNext's choice, the breaker         nextEligibleAt and waitReason, a wake-up
//	setGateConditions       suspend, parked items, the round               conditions Suspended, Parked, Complete
//	endLockWait             startNext's request                            lockWait cleared when no run waits, waitReason LockHeld (over setWaits')
//	setBreakerCondition     status.circuitBreaker, currentRun              condition TargetAvailable (with spec.circuitBreaker)
//	setRunningCondition     currentRun as final                            condition Running
//	setVerifiedCondition    spec.verify, the items' verifications          condition Verified
//	setUnusualRunsCondition the items' recentRunSeconds                    condition UnusualRuns
//	setAtRisk               Input.AtRisk, metadata.generation              condition AtRisk as forecast for this generation
//	recordTransitions       Input.Notify, the status made, Finished        status.notifications: transitions added, acknowledged
//	                                                                       ones removed; condition Notified
//	batchSuperseded         pruneHistory's superseded pods, currentRun     DeleteBatch now, or none while they wait
//	untrackPods             the pods with oaat.io/run-tracking, currentRun Untrack: every such pod but the current run's
//
// The steps that wait for a time return it, and Decide alone turns the earliest into the plan's
// wake-up (RequeueAfter): observeTick (the next round), stopCurrentRun (a timeout or a blackout),
// checkReady (a pod create or an invalid spec retried), startNext (a lock to look at again, an
// OaatType that cannot make the chosen item's pod, or the open breaker's next probe) and setWaits
// (the first waiting item).
func Decide(in Input) Plan {
	d := newDecision(in)
	var wake wakeUp
	d.recordCurrentRun()
	d.carryHistory()
	d.deleteRoguePods()
	d.pruneHistory()
	d.syncItems()
	d.dropStaleVerification()
	d.setItemsValid()
	d.reviewOnDemandRuns()
	d.observeReset()
	d.reconcileBreaker()
	d.followLockBreakers()
	wake.at(d.observeTick())
	// Also with an invalid spec: a run already started keeps the stops that can still be read.
	wake.at(d.stopCurrentRun())
	ready, retryAt := d.checkReady()
	wake.at(retryAt)
	if ready {
		wake.at(d.startNext())
	}
	d.updateOpenOnDemandRuns()
	if d.policyErr == nil {
		wake.at(d.setWaits())
		d.setGateConditions()
	}
	d.endLockWait()
	d.setBreakerCondition()
	d.setRunningCondition()
	d.setVerifiedCondition()
	d.setUnusualRunsCondition()
	d.setAtRisk()
	d.recordTransitions()
	d.batchSuperseded()
	d.untrackPods()
	d.plan.RequeueAfter = wake.after(in.Now)
	return d.plan
}
