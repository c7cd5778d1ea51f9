package controllers

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The final status of an on-demand run meets a conflict once (anything touched the OaatRun since it
// was read): the group must not record the end of the run before the on-demand run says how it
// ended, and the on-demand run ends with its run's real result, exit code and pod.
func TestOnDemandRunResultSurvivesAConflict(t *testing.T) {
	group := builders.Group("a").Named("g").Obj()
	group.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
	onDemandRun := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: "now", Namespace: testNamespace, CreationTimestamp: metav1.NewTime(builders.T0)},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: "g", Item: "a"},
	}
	var armed, injected atomic.Int32
	c := newFakeClient(t, interceptor.Funcs{
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if run, ok := obj.(*v1alpha1.OaatRun); ok && run.Status.Phase.Finished() && armed.Load() == 1 && injected.Add(1) == 1 {
				return apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "oaatruns"},
					run.Name, errors.New("the object has been modified (injected)"))
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}, builders.Type().Obj(), group, onDemandRun)
	r := newTestReconciler(c, c)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("first pass: %v", err)
	}
	pods := listPods(t, c)
	if len(pods) != 1 || pods[0].Annotations[v1alpha1.AnnotationOaatRun] != "now" {
		t.Fatalf("pods %v: want one pod for the on-demand run", podNames(pods))
	}
	podName := pods[0].Name
	r.clock.Step(time.Minute)
	finishPod(t, c, podName, 3, r.clock.Now())

	armed.Store(1)
	if _, err := r.reconcile(t, "g"); err != nil {
		t.Logf("pass with the conflict: %v", err)
	}
	if injected.Load() != 1 {
		t.Fatalf("the conflict was not injected (%d)", injected.Load())
	}
	if cr := getGroup(t, c, "g").Status.CurrentRun; cr == nil || cr.PodName != podName {
		t.Errorf("after the conflict on the on-demand run's final status, the group's currentRun is %+v: "+
			"the group recorded the run's end while its on-demand run's result was unwritten", cr)
	}
	for range 3 {
		r.clock.Step(5 * time.Second)
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("later pass: %v", err)
		}
	}
	got := &v1alpha1.OaatRun{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(onDemandRun), got); err != nil {
		t.Fatal(err)
	}
	s := got.Status
	if s.Phase != v1alpha1.OaatRunSucceeded || s.ExitCode == nil || *s.ExitCode != 3 || s.PodName != podName {
		t.Fatalf("on-demand run status = phase %s, reason %s, exit code %v, pod %q (%s); want Succeeded, exit code 3, pod %s",
			s.Phase, s.Reason, s.ExitCode, s.PodName, s.Message, podName)
	}
	it := getGroup(t, c, "g").Status.Items[0]
	if it.LastPodName != podName || it.LastSuccess == nil || getGroup(t, c, "g").Status.CurrentRun != nil {
		t.Fatalf("the group did not record the run: item %+v", it)
	}
}
