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
)

const (
	// conflictRetry is how soon a group whose status write lost an optimistic-lock race is looked
	// at again, should the watch event of the winning write not come.
	conflictRetry = 2 * time.Second
	// cacheLagRetry is how soon a group is looked at again when the API server shows a live pod
	// of the group that the cache does not show yet; the pod's watch event usually comes first.
	cacheLagRetry = 2 * time.Second
)

// apply carries out a plan: status first (the intent of a run is persisted before its pod
// exists), then the pod, then deletions. Each event and the run metrics follow the write of the
// state they report, so that a lost race (conflict) reports nothing and the pass that wins reports
// each run once, whatever fails after it. What replaces a part of the plan that the API server
// refuses is the plan's too (planner.Fallback).
func (r *OaatGroupReconciler) apply(ctx context.Context, group *v1alpha1.OaatGroup, plan planner.Plan) (ctrl.Result, error) {
	if plan.Create != nil {
		// A process that lost the Lease (paused past its expiry) must not even write the intent
		// of a run: the new leader would record it as a failed start.
		if err := r.Leader.Check(ctx); err != nil {
			return ctrl.Result{}, fmt.Errorf("not starting a run: %w", err)
		}
		// The cache may not show a pod the API server has (a lagging informer): a run starts
		// only when the API server itself shows no live pod of the group.
		live, err := r.livePod(ctx, group)
		if err != nil {
			return ctrl.Result{}, err
		}
		if live != "" {
			log.FromContext(ctx).Info("Not starting a run: the API server shows a live pod of the group that the cache does not show yet",
				"pod", live)
			return ctrl.Result{RequeueAfter: cacheLagRetry}, nil
		}
	}
	if settled, err := r.settleOnDemandRuns(ctx, plan.FinalOnDemandRuns); err != nil {
		return ctrl.Result{}, err
	} else if !settled {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	if len(plan.Locks.Acquire) > 0 {
		// The slots are taken before the intent of the run is written: a run the status names
		// always holds its locks.
		if taken, err := r.acquireLocks(ctx, group, plan.Locks.Acquire, createdName(plan)); !taken {
			return ctrl.Result{RequeueAfter: conflictRetry}, err
		}
	}
	if asserted, err := r.assertHolders(ctx, plan.Locks.Assert); !asserted {
		return ctrl.Result{RequeueAfter: conflictRetry}, err
	}
	statusWritten := false
	if !equality.Semantic.DeepEqual(group.Status, plan.Status) {
		written := group.Status
		group.Status = plan.Status
		if err := r.Status().Update(ctx, group); err != nil {
			// The intent was not written, whatever refused it (a conflict, an invalid status, a
			// timeout): the slots taken for it are given back (or, failing that, by the next pass).
			if undoErr := r.giveBack(ctx, group, plan.Locks.Acquire, createdName(plan)); undoErr != nil {
				log.FromContext(ctx).Error(undoErr, "Cannot give back the locks taken for the run; the next pass releases them")
			}
			switch {
			case apierrors.IsConflict(err):
				// Someone wrote the group since it was read: the watch event of that write brings
				// the group back, with a fresh decision.
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			case apierrors.IsInvalid(err):
				r.refusals.refused(client.ObjectKeyFromObject(group), plan.DecidedAt())
				group.Status = written
				return r.reportRejectedStatus(ctx, group, plan, err)
			}
			return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
		}
		r.refusals.written(client.ObjectKeyFromObject(group), group.Status)
		statusWritten = true
	}
	for _, run := range plan.Finished {
		r.Runs.Observe(group.Namespace, group.Name, run.Item, string(run.Result), run.Duration)
	}
	if plan.RoundOverrun {
		r.Runs.RoundOverrun(group.Namespace, group.Name)
	}
	for _, u := range plan.Locks.Acquire {
		r.LockMetrics.ObserveWait(u.Lock.GetNamespace(), u.Lock.GetName(), plan.Locks.Waited)
	}
	r.announce(ctx, group, plan.Events...)

	if plan.Create != nil {
		if err := r.createPod(ctx, group, plan.Create); err != nil {
			switch {
			case errors.Is(err, leader.ErrNotLeader):
				// The intent stays for the new leader, which records it as a run whose pod
				// was never created.
				return ctrl.Result{}, err
			case refused(err):
				return r.withdrawRun(ctx, group, plan.WithdrawRun(err), err)
			}
			// The pod may exist: the intent stays (planner.Plan.KeepRun).
			log.FromContext(ctx).Error(err, "Creating the pod failed without proof that it was not created; keeping the run",
				"pod", plan.Create.Name)
			return ctrl.Result{RequeueAfter: plan.KeepRun().RequeueAfter}, nil
		}
		log.FromContext(ctx).Info("Started item", "item", plan.Status.CurrentRun.Item, "pod", plan.Create.Name,
			"oaatRun", plan.Status.CurrentRun.OaatRun)
	}
	for _, u := range plan.OpenOnDemandRuns {
		// An on-demand run changed meanwhile is left to the pass its change triggers: status
		// alone says which OaatRun the current run serves.
		if err := r.onDemandRuns.update(ctx, u); err != nil && !apierrors.IsConflict(err) {
			return ctrl.Result{}, err
		}
	}
	// Superseded finished pods go in batches, one request each (prune.go).
	superseded, deletions := splitDeletions(plan.Delete)
	if pruneNow(len(superseded), plan.Status.CurrentRun == nil) {
		if err := r.deleteSuperseded(ctx, group, superseded); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, d := range deletions {
		if err := r.deletePod(ctx, d.Pod); err != nil {
			return ctrl.Result{}, err
		}
		if d.Event != nil {
			r.announce(ctx, group, *d.Event)
		}
	}
	// The slots of ended runs are given back last: the run's outcome is recorded, and a failure
	// here must not keep the new run's pod from being created.
	if released, err := r.releaseLocks(ctx, group, plan.Locks.Release, statusWritten); err != nil {
		return ctrl.Result{}, err
	} else if !released {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	log.FromContext(ctx).V(1).Info("Reconciled", "runCount", group.Status.RunCount,
		"created", plan.Create != nil, "deleted", len(plan.Delete), "requeueAfter", plan.RequeueAfter)
	return ctrl.Result{RequeueAfter: plan.RequeueAfter}, nil
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
		if !planner.Terminal(&pods.Items[i]) {
			return pods.Items[i].Name, nil
		}
	}
	return "", nil
}

// reportRejectedStatus reports a status that the API server refused as invalid (rejected): in the
// status as last written (group's), Ready says so (once), with an event, and the group is looked
// at again after a wait that grows with the time the refusal lasts (planner.Plan.StatusRejected).
// The plan's releases are given back first, as the plan decided them (the slots of runs whose pods
// have all ended), once the API server shows the group unchanged since it was read: a slot kept by
// a group whose status cannot be written would keep every other group naming the lock from
// starting.
func (r *OaatGroupReconciler) reportRejectedStatus(ctx context.Context, group *v1alpha1.OaatGroup, plan planner.Plan, rejected error) (ctrl.Result, error) {
	log.FromContext(ctx).Error(rejected, "The API server refused the group's new status")
	decided := group.DeepCopy()
	decided.Status = plan.Status
	if _, err := r.releaseLocks(ctx, decided, plan.Locks.Release, false); err != nil {
		return ctrl.Result{}, err
	}
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
// pass that did not see the result); any other pod of that name makes the run fail to start.
func (r *OaatGroupReconciler) createPod(ctx context.Context, group *v1alpha1.OaatGroup, pod *corev1.Pod) error {
	if err := r.Leader.Check(ctx); err != nil {
		return fmt.Errorf("not creating pod %s: %w", pod.Name, err)
	}
	err := r.Create(ctx, pod)
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
		r.Recorder.Eventf(group, nil, e.Type, e.Reason, "Reconcile", "%s", message.Event(e.Message))
		logger.Info(e.Message, "reason", e.Reason)
	}
}

// createdName is the name of the pod the plan creates, empty when it creates none.
func createdName(plan planner.Plan) string {
	if plan.Create == nil {
		return ""
	}
	return plan.Create.Name
}
