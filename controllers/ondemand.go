package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/metrics"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// onDemandRunWriter writes the status of OaatRuns for both reconcilers: an on-demand run that
// reaches its final phase is counted and reported in an event on it, once its status is written.
type onDemandRunWriter struct {
	client   client.Client
	recorder recorder.EventRecorder
	runs     *metrics.RunMetrics
}

// update writes the on-demand run's new status if its OaatRun is unchanged since it was read. An
// OaatRun deleted meanwhile needs no status. An OaatRun changed meanwhile (a conflict) is not
// written: the error says so, and the caller decides whether it may go on without it (an open
// on-demand run's status is written again by the pass its change triggers) or not (the final
// status of the run the group is about to record as ended).
func (w onDemandRunWriter) update(ctx context.Context, u planner.OnDemandRunUpdate) error {
	onDemandRun := u.OnDemandRun.DeepCopy()
	onDemandRun.Status = u.Status
	err := w.client.Status().Update(ctx, onDemandRun)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("writing the status of OaatRun %s: %w", onDemandRun.Name, err)
	}
	if !onDemandRun.Status.Phase.Finished() {
		return nil
	}
	w.runs.OnDemandRun(onDemandRun.Namespace, onDemandRun.Spec.OaatGroup, strings.ToLower(string(onDemandRun.Status.Phase)))
	eventType := corev1.EventTypeWarning
	if onDemandRun.Status.Phase == v1alpha1.OaatRunSucceeded {
		eventType = corev1.EventTypeNormal
	}
	w.recorder.Eventf(onDemandRun, nil, eventType, onDemandRun.Status.Reason, "Run", "%s",
		message.Event(fmt.Sprintf("%s: %s", onDemandRun.Status.Phase, onDemandRun.Status.Message)))
	return nil
}
