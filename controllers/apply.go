package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/leader"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

const (
	// conflictRetry is how soon a group whose status write lost an optimistic-lock race is looked
	// at again, should the watch event of the winning write not come.
	conflictRetry = 2 * time.Second
	// cacheLagRetry is how soon a group is looked at again when the API server shows a live pod
	// of the group that the cache does not show yet; the pod's watch event usually comes first.
	cacheLagRetry = 2 * time.Second
)

// applying is one pass's application of a plan: the group, whose status becomes the plan's once
// persisted, the plan, and what the phases learn on the way.
type applying struct {
	group *v1alpha1.OaatGroup
	plan  planner.Plan
	// now is the time of the pass's decision (planner.Input.Now), which its hints are noted at.
	now time.Time
	// statusWritten says that the plan's status was written in this pass.
	statusWritten bool
	// pending is what this manager's writes expected when the pass began (expectations).
	pending pending
}

// applyPhase is a phase of apply. It returns the pass's result when the pass ends with it, nil
// to go on with the next phase.
type applyPhase struct {
	name string
	run  func(context.Context, *applying) (*ctrl.Result, error)
	// namesItsErrors says that run's errors name the phases they come from already (alongside).
	namesItsErrors bool
}

// applyPhases are the phases of apply, in the order planner.Plan documents: status first (the
// intent of a run is persisted before its pod exists), then the pod, then deletions. Each event
// and the run metrics follow the write of the state they report, so that a lost race (conflict)
// reports nothing and the pass that wins reports each run once, whatever fails after it. What
// replaces a part of the plan that the API server refuses is the plan's too (planner.Fallback).
func (r *OaatGroupReconciler) applyPhases() []applyPhase {
	return []applyPhase{
		{name: "check the start", run: r.checkStart},
		{name: "final on-demand statuses", run: r.finalOnDemandStatuses},
		{name: "persist the status", run: r.persistStatus},
		{name: "delete the adopted history", run: r.deleteAdoptedHistory},
		alongside(applyPhase{name: "create the pod", run: r.createRunPod}, applyPhase{name: "untrack pods", run: r.untrackPods}),
		{name: "open on-demand runs", run: r.openOnDemandRuns},
		{name: "delete pods", run: r.deletePods},
		{name: "add the history finalizer", run: r.addHistoryFinalizer},
	}
}

// alongside is a phase that runs first and second at the same time: two phases whose writes
// depend on the status written before them and on nothing of each other, so that a pass waits for
// the slower of the two requests, not their sum. The pod of a new run and the removal of the
// finalizer from the pods whose outcomes that status records are such a pair: a pass that ends
// one run and starts the next makes both, each one round trip to the API server. second must not
// end the pass (its result is not read); the pass ends with first's result, or with the errors of
// both.
func alongside(first, second applyPhase) applyPhase {
	return applyPhase{name: first.name + " and " + second.name, namesItsErrors: true, run: func(ctx context.Context, a *applying) (*ctrl.Result, error) {
		var secondErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			if _, err := second.run(ctx, a); err != nil {
				secondErr = fmt.Errorf("%s: %w", second.name, err)
			}
		}()
		result, err := first.run(ctx, a)
		<-done
		if err != nil {
			err = fmt.Errorf("%s: %w", first.name, err)
		}
		return result, errors.Join(err, secondErr)
	}}
}

// apply carries out a plan, phase by phase (applyPhases); an error names the phase it broke.
func (r *OaatGroupReconciler) apply(ctx context.Context, group *v1alpha1.OaatGroup, plan planner.Plan, now time.Time, pending pending) (ctrl.Result, error) {
	a := &applying{group: group, plan: plan, now: now, pending: pending}
	for _, phase := range r.applyPhases() {
		result, err := phase.run(ctx, a)
		if err != nil && !phase.namesItsErrors {
			err = fmt.Errorf("%s: %w", phase.name, err)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if result != nil {
			return *result, nil
		}
	}
	log.FromContext(ctx).V(1).Info("Reconciled", "runCount", group.Status.RunCount,
		"created", plan.Create != nil, "deleted", len(plan.Delete)+len(plan.DeleteBatch), "requeueAfter", plan.RequeueAfter)
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
}

// requeueAfter ends a pass with a look at the group again after d.
func requeueAfter(d time.Duration) *ctrl.Result { return &ctrl.Result{RequeueAfter: d} }

// checkStart lets a run start only if this process still leads (a process that lost the Lease,
// paused past its expiry, must not even write the intent of a run: the new leader would record it
// as a failed start) and the API server itself shows no live pod of the group (the cache may not
// show a pod the API server has).
func (r *OaatGroupReconciler) checkStart(ctx context.Context, a *applying) (*ctrl.Result, error) {
	if a.plan.Create == nil {
		return nil, nil
	}
	if err := r.Leader.Check(ctx); err != nil {
		return nil, fmt.Errorf("not starting a run: %w", err)
	}
	live, err := r.livePod(ctx, a.group)
	if err != nil {
		return nil, err
	}
	if live != "" {
		log.FromContext(ctx).Info("Not starting a run: the API server shows a live pod of the group that the cache does not show yet",
			"pod", live)
		return requeueAfter(cacheLagRetry), nil
	}
	return nil, nil
}

// finalOnDemandStatuses writes the final status of on-demand runs (settleOnDemandRuns).
func (r *OaatGroupReconciler) finalOnDemandStatuses(ctx context.Context, a *applying) (*ctrl.Result, error) {
	settled, err := r.settleOnDemandRuns(ctx, a.plan.FinalOnDemandRuns)
	if err != nil || settled {
		return nil, err
	}
	return requeueAfter(conflictRetry), nil
}

// persistStatus writes the plan's status if it changed, then observes the finished runs and
// emits the events it reports.
func (r *OaatGroupReconciler) persistStatus(ctx context.Context, a *applying) (*ctrl.Result, error) {
	group, plan := a.group, a.plan
	droppedBefore := dropped(group.Status.Notifications)
	if !equality.Semantic.DeepEqual(group.Status, plan.Status) {
		written := group.Status
		group.Status = plan.Status
		if err := r.Status().Update(ctx, group); err != nil {
			switch {
			case apierrors.IsConflict(err):
				// Someone wrote the group since it was read: the watch event of that write brings
				// the group back, with a fresh decision.
				return requeueAfter(conflictRetry), nil
			case apierrors.IsInvalid(err):
				r.refusals.refused(client.ObjectKeyFromObject(group), plan.DecidedAt())
				group.Status = written
				result, err := r.reportRejectedStatus(ctx, group, plan, err)
				return &result, err
			}
			return nil, fmt.Errorf("writing status: %w", err)
		}
		r.refusals.written(client.ObjectKeyFromObject(group), group.Status)
		a.statusWritten = true
	}
	for _, run := range plan.Finished {
		r.Runs.Observe(group.Namespace, group.Name, run.Item, string(run.Result), run.Duration)
	}
	for _, probe := range plan.Probes {
		r.Runs.Probe(group.Namespace, group.Name, string(probe))
	}
	if plan.RoundOverrun {
		r.Runs.RoundOverrun(group.Namespace, group.Name)
	}
	if w := plan.LocksWaited; w != nil {
		for _, lock := range w.Locks {
			r.LockMetrics.ObserveWait(lock.GetNamespace(), lock.GetName(), w.Waited)
		}
	}
	r.announce(ctx, group, plan.Events...)
	r.Notify.Metrics.Dropped(group.Namespace, group.Name, dropped(plan.Status.Notifications)-droppedBefore)
	r.notifier.consider(group, plan.Status.Notifications, r.groupSink(group))
	return nil, nil
}

// createRunPod creates the pod whose intent the status records, with the plan's fallbacks when
// the API server refuses it.
func (r *OaatGroupReconciler) createRunPod(ctx context.Context, a *applying) (*ctrl.Result, error) {
	group, plan := a.group, a.plan
	if plan.Create == nil {
		return nil, nil
	}
	if err := r.createPod(ctx, group, plan.Create, a.now); err != nil {
		switch {
		case errors.Is(err, leader.ErrNotLeader):
			// The intent stays for the new leader, which records it as a run whose pod was
			// never created.
			return nil, err
		case refused(err):
			result, err := r.withdrawRun(ctx, group, plan.WithdrawRun(err), err)
			return &result, err
		}
		// The pod may exist: the intent stays (planner.Plan.KeepRun).
		log.FromContext(ctx).Error(err, "Creating the pod failed without proof that it was not created; keeping the run",
			"pod", plan.Create.Name)
		return requeueAfter(plan.KeepRun().RequeueAfter), nil
	}
	log.FromContext(ctx).Info("Started item", "item", plan.Status.CurrentRun.Item, "pod", plan.Create.Name,
		"oaatRun", plan.Status.CurrentRun.OaatRun)
	return nil, nil
}

// openOnDemandRuns writes the Pending and InProgress statuses of on-demand runs. One changed
// meanwhile is left to the pass its change triggers: status alone says which OaatRun the current
// run serves.
func (r *OaatGroupReconciler) openOnDemandRuns(ctx context.Context, a *applying) (*ctrl.Result, error) {
	for _, u := range a.plan.OpenOnDemandRuns {
		if err := r.onDemandRuns.update(ctx, u); err != nil && !apierrors.IsConflict(err) {
			return nil, err
		}
	}
	return nil, nil
}

// deletePods deletes the superseded finished pods in one request (prune.go), then each other pod
// of the plan, with its event.
func (r *OaatGroupReconciler) deletePods(ctx context.Context, a *applying) (*ctrl.Result, error) {
	if len(a.plan.DeleteBatch) > 0 {
		if err := r.deleteSuperseded(ctx, a.group, a.plan.DeleteBatch); err != nil {
			return nil, err
		}
	}
	for _, d := range a.plan.Delete {
		if err := r.deletePod(ctx, d.Pod); err != nil {
			return nil, err
		}
		if d.Event != nil {
			r.announce(ctx, a.group, *d.Event)
		}
	}
	return nil, nil
}

// settleOnDemandRuns writes the final status of on-demand runs, and reports whether the group's
// status may be written: not when the OaatRun of the run it ends could not be written (it changed
// since it was read), or the run's result would be lost; the OaatRun's change brings the group
// back, with a fresh decision. Another OaatRun that changed is left to the pass its change
// triggers.
func (r *OaatGroupReconciler) settleOnDemandRuns(ctx context.Context, updates []planner.OnDemandRunUpdate) (bool, error) {
	for _, u := range updates {
		err := r.onDemandRuns.update(ctx, u)
		switch {
		case err == nil:
		case u.EndsRun && apierrors.IsConflict(err):
			log.FromContext(ctx).V(1).Info("The OaatRun of the ended run changed since it was read; trying again",
				"oaatRun", u.OnDemandRun.Name)
			return false, nil
		case !apierrors.IsConflict(err):
			return false, err
		}
	}
	return true, nil
}

// livePod returns the name of a live pod of the group as the API server shows it, or "".
func (r *OaatGroupReconciler) livePod(ctx context.Context, group *v1alpha1.OaatGroup) (string, error) {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(group.Namespace),
		client.MatchingLabels{v1alpha1.LabelGroup: group.Name}); err != nil {
		return "", fmt.Errorf("listing the pods of the group from the API server: %w", err)
	}
	for i := range pods.Items {
		if pod := &pods.Items[i]; !podbuild.Terminal(pod) && !podbuild.Gone(pod) {
			return pod.Name, nil
		}
	}
	return "", nil
}

// reportRejectedStatus reports a status that the API server refused as invalid (rejected): in the
// status as last written (group's), Ready says so (once), with an event, and the group is looked
// at again after a wait that grows with the time the refusal lasts (planner.Plan.StatusRejected).
// A slot of its locks that the status as last written names goes once the run's pod has ended:
// each lock's review drops the slot of a run whose pod has ended (locks.Decide), so that a group
// whose status cannot be written does not keep every other group naming the lock from starting.
func (r *OaatGroupReconciler) reportRejectedStatus(ctx context.Context, group *v1alpha1.OaatGroup, plan planner.Plan, rejected error) (ctrl.Result, error) {
	log.FromContext(ctx).Error(rejected, "The API server refused the group's new status")
	report := plan.StatusRejected(group.Status, rejected)
	group.Status = report.Status
	if report.Event == nil {
		return ctrl.Result{RequeueAfter: report.RequeueAfter}, nil
	}
	if err := r.Status().Update(ctx, group); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reporting the refused status: %w", err)
	}
	r.announce(ctx, group, *report.Event)
	return ctrl.Result{RequeueAfter: report.RequeueAfter}, nil
}

// errForeignPod says that a pod of the run's name exists and is not the group's.
var errForeignPod = errors.New("exists already and this group does not control it")

// refused reports whether a pod-create error proves that the pod was not created and will not be:
// the API server refused it (invalid, forbidden, over quota, a bad request), or a pod of that
// name that is not the group's exists. Any other error (a timeout, a server error, a lost
// connection) may come after the pod was created.
func refused(err error) bool {
	return errors.Is(err, errForeignPod) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) ||
		apierrors.IsBadRequest(err)
}

// createPod creates the pod of the run that status intends, if this process still leads. A pod of
// that name that exists already is the run's pod when the group controls it (created by an earlier
// pass that did not see the result); any other pod of that name makes the run fail to start. A pod
// that mounts ReadWriteOnce claims in use goes to their node (place). A pod it created is
// expected, from the pass's time now, until an event shows it (expectations).
func (r *OaatGroupReconciler) createPod(ctx context.Context, group *v1alpha1.OaatGroup, pod *corev1.Pod, now time.Time) error {
	r.place(ctx, pod)
	if err := r.Leader.Check(ctx); err != nil {
		return fmt.Errorf("not creating pod %s: %w", pod.Name, err)
	}
	err := r.Create(ctx, pod)
	if err == nil {
		r.expected.expectCreate(client.ObjectKeyFromObject(group), pod.Name, now)
	}
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), existing); err != nil {
		return fmt.Errorf("reading pod %s, which exists already: %w", pod.Name, err)
	}
	if !metav1.IsControlledBy(existing, group) {
		return fmt.Errorf("a pod named %s %w", pod.Name, errForeignPod)
	}
	return nil
}

// withdrawRun writes the withdrawal of the intent of a run whose pod the API server refused
// (createErr), as the plan decided it (planner.Plan.WithdrawRun), and reports it.
func (r *OaatGroupReconciler) withdrawRun(ctx context.Context, group *v1alpha1.OaatGroup, withdrawal planner.Fallback, createErr error) (ctrl.Result, error) {
	group.Status = withdrawal.Status
	if err := r.Status().Update(ctx, group); err != nil {
		return ctrl.Result{}, fmt.Errorf("withdrawing the run after %w: %w", createErr, err)
	}
	r.announce(ctx, group, *withdrawal.Event)
	return ctrl.Result{RequeueAfter: withdrawal.RequeueAfter}, nil
}

// deletePod deletes a pod if it is still the one the plan saw.
func (r *OaatGroupReconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := r.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
}

// announce emits the events about the group and logs them, so that the operator's log tells the
// story of each group's runs too.
func (r *OaatGroupReconciler) announce(ctx context.Context, group *v1alpha1.OaatGroup, events ...planner.Event) {
	logger := log.FromContext(ctx)
	for _, e := range events {
		r.Recorder.Eventf(group, nil, e.Type, string(e.Reason), "Reconcile", "%s", message.Event(e.Message))
		logger.Info(e.Message, "reason", e.Reason)
	}
}
