package controllers

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/forecast"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// forecaster makes condition AtRisk off the reconcile path. A pass for which a forecast is due
// (forecast.Due) hands it a copy of its snapshot and plan; one goroutine plays them (forecast.AtRisk),
// the newest of each group only, in the order they came, and queues the group again at the
// priority of a group with nothing due; the group's next pass writes the condition made
// (planner.Input.AtRisk, Decide's step setAtRisk). So the group's status keeps one writer, the
// plan is never edited after Decide, and a long forecast holds no reconcile worker. What it keeps
// is derived: lost with the process, the condition in status stays as last written, and the next
// due pass (the first pass of a new generation, a round's start, a run that ends otherwise than
// assumed, a cycle's last run) makes it again.
type forecaster struct {
	mu sync.Mutex
	// pending are the forecasts to make, the newest of each group, in order.
	pending map[types.NamespacedName]planned
	order   []types.NamespacedName
	// made are the conditions made, the newest of each group.
	made map[types.NamespacedName]metav1.Condition
	// work has a value while forecasts are pending.
	work chan struct{}
	queueHandover
}

// planned is a pass's snapshot and the plan Decide made from it.
type planned struct {
	in   planner.Input
	plan planner.Plan
}

func newForecaster() *forecaster {
	return &forecaster{
		pending:       map[types.NamespacedName]planned{},
		made:          map[types.NamespacedName]metav1.Condition{},
		work:          make(chan struct{}, 1),
		queueHandover: newQueueHandover(),
	}
}

// atRisk is the condition last made for the group, nil when none is.
func (f *forecaster) atRisk(key types.NamespacedName) *metav1.Condition {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.made[key]; ok {
		return &c
	}
	return nil
}

// consider hands the pass's snapshot and plan over when a forecast is due. While the condition in
// the plan is missing or of an earlier generation, a forecast of the group's generation pending or
// made (and not yet written) is enough: each pass until it is written would find one due.
func (f *forecaster) consider(key types.NamespacedName, in planner.Input, plan planner.Plan) {
	if !forecast.Due(in, &plan) {
		return
	}
	generation := in.Group.Generation
	f.mu.Lock()
	defer f.mu.Unlock()
	p, isPending := f.pending[key]
	if c := meta.FindStatusCondition(plan.Status.Conditions, v1alpha1.ConditionAtRisk); c == nil || c.ObservedGeneration != generation {
		if made, ok := f.made[key]; (ok && made.ObservedGeneration == generation) || (isPending && p.in.Group.Generation == generation) {
			return
		}
	}
	if !isPending {
		f.order = append(f.order, key)
	}
	in, plan = detached(in, plan)
	f.pending[key] = planned{in: in, plan: plan}
	select {
	case f.work <- struct{}{}:
	default:
	}
}

// forget drops what the forecaster holds of a deleted group.
func (f *forecaster) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.made, key)
	delete(f.pending, key) // its place in order is skipped when reached
}

// Start makes the pending forecasts one at a time, while this process leads.
func (f *forecaster) Start(ctx context.Context) error {
	if !f.await(ctx) {
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.work:
		}
		for {
			key, p, ok := f.next()
			if !ok {
				break
			}
			c := forecast.AtRisk(p.in, p.plan)
			f.mu.Lock()
			f.made[key] = c
			f.mu.Unlock()
			f.wakeIdle(key)
		}
	}
}

// next takes the oldest pending forecast.
func (f *forecaster) next() (types.NamespacedName, planned, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.order) > 0 {
		key := f.order[0]
		f.order = f.order[1:]
		if p, ok := f.pending[key]; ok {
			delete(f.pending, key)
			return key, p, true
		}
	}
	return types.NamespacedName{}, planned{}, false
}

// detached copies what a forecast reads of a pass's snapshot and plan that the pass's apply goes
// on to change: the group, its pods, its OaatRuns, the new status and the pod to create.
func detached(in planner.Input, plan planner.Plan) (planner.Input, planner.Plan) {
	in.Group = in.Group.DeepCopy()
	in.Pods = deepCopied(in.Pods, (*corev1.Pod).DeepCopy)
	in.OnDemandRuns = deepCopied(in.OnDemandRuns, (*v1alpha1.OaatRun).DeepCopy)
	plan.Status = *plan.Status.DeepCopy()
	plan.Create = plan.Create.DeepCopy()
	plan.Delete = slices.Clone(plan.Delete)
	for i := range plan.Delete {
		plan.Delete[i].Pod = plan.Delete[i].Pod.DeepCopy()
	}
	plan.DeleteBatch = slices.Clone(plan.DeleteBatch)
	for i, pod := range plan.DeleteBatch {
		plan.DeleteBatch[i] = pod.DeepCopy()
	}
	for _, updates := range []*[]planner.OnDemandRunUpdate{&plan.FinalOnDemandRuns, &plan.OpenOnDemandRuns} {
		*updates = slices.Clone(*updates)
		for i := range *updates {
			(*updates)[i].OnDemandRun = (*updates)[i].OnDemandRun.DeepCopy()
			(*updates)[i].Status = *(*updates)[i].Status.DeepCopy()
		}
	}
	return in, plan
}

// deepCopied is a deep copy of objects.
func deepCopied[T any](objects []T, deepCopy func(*T) *T) []T {
	out := make([]T, len(objects))
	for i := range objects {
		out[i] = *deepCopy(&objects[i])
	}
	return out
}
