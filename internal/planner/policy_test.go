package planner

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/schedule"
)

func TestClassify(t *testing.T) {
	p := policy{Policy: groupspec.Policy{ExitCodes: v1alpha1.ExitCodes{Success: []int32{3, 5}, DoNotRetry: []int32{4}}}}
	tests := []struct {
		codes       []int32
		wantSuccess bool
		wantPark    int32 // 0: none
	}{
		{codes: nil},
		{codes: []int32{3}, wantSuccess: true},
		{codes: []int32{3, 5}, wantSuccess: true},
		{codes: []int32{3, 1}},
		{codes: []int32{1}},
		{codes: []int32{4}, wantPark: 4},
		{codes: []int32{3, 4}, wantPark: 4},
	}
	for _, tt := range tests {
		success, park := p.classify(tt.codes)
		gotPark := int32(0)
		if park != nil {
			gotPark = *park
		}
		if success != tt.wantSuccess || gotPark != tt.wantPark {
			t.Errorf("classify(%v) = %v, %d; want %v, %d", tt.codes, success, gotPark, tt.wantSuccess, tt.wantPark)
		}
	}
}

func TestDecideSuccessExitCode(t *testing.T) {
	g := newGroup("a")
	g.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodFailed), 3, "Error", at(time.Minute))

	p := Decide(input(g, time.Minute, pod))
	a := planItem(t, p, "a")
	if a.LastSuccess == nil || a.LastFailure != nil || *a.LastExitCode != 3 || p.Finished[0].Result != v1alpha1.ResultSucceeded {
		t.Fatalf("exit code 3 is a success: item a = %+v, finished %+v", a, p.Finished)
	}
}

func TestDecideDoNotRetryParksUntilTheSpecChanges(t *testing.T) {
	g := newGroup("a", "b")
	g.Generation = 3
	g.Spec.ExitCodes = &v1alpha1.ExitCodes{DoNotRetry: []int32{4}}
	itemStatus(g, "b").LastSuccess = at(0)
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodFailed), 4, "Error", at(time.Minute))

	p := Decide(input(g, time.Minute, pod))
	a := planItem(t, p, "a")
	if a.LastFailure == nil || a.FailureCount != 1 || a.ParkedGeneration != 3 || a.WaitReason != v1alpha1.WaitParked || a.NextEligibleAt != nil {
		t.Fatalf("item a = %+v", a)
	}
	if c := condition(t, p, v1alpha1.ConditionParked); c.Status != metav1.ConditionTrue || c.Reason != string(v1alpha1.ReasonItemsParked) {
		t.Fatalf("Parked = %+v", c)
	}
	if !slices.Equal(reasons(p), []v1alpha1.Reason{v1alpha1.ReasonRunFailed, v1alpha1.ReasonItemParked, v1alpha1.ReasonItemsParked}) {
		t.Fatalf("events = %v", reasons(p))
	}

	// Long after the cool-off the item is still parked; b's frequency is what the group waits for.
	parked := applied(g, p)
	later := Decide(input(parked, 2*time.Hour, pod))
	if later.Create == nil || later.Status.CurrentRun.Item != "b" {
		t.Fatalf("two hours later: %+v, want b to run (a is parked)", later.Status.CurrentRun)
	}

	// A spec change releases it.
	changed := parked.DeepCopy()
	changed.Generation = 4
	p = Decide(input(changed, 2*time.Minute, pod))
	a = planItem(t, p, "a")
	if a.ParkedGeneration != 0 || a.WaitReason != v1alpha1.WaitCoolingOff {
		t.Fatalf("after a spec change item a = %+v", a)
	}
	if c := condition(t, p, v1alpha1.ConditionParked); c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonNoneParked) {
		t.Fatalf("Parked = %+v", c)
	}
}

func TestDecideInvalidWindowIsNotReady(t *testing.T) {
	g := newGroup("a")
	g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "01:00", End: "02:00", TimeZone: "Mars/Olympus"}}
	_, parseErr := schedule.ParseWindow("01:00", "02:00", nil, "Mars/Olympus")

	// Nothing starts; the spec is read again in 5s.
	text := "spec.blackoutWindows[0]: " + parseErr.Error()
	checkPlan(t, Plan{
		Status: v1alpha1.OaatGroupStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				cond(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonInvalidSpec, text, 0), idleCond(0)},
			ItemCount: 1, Items: []v1alpha1.ItemStatus{{Name: "a"}},
		},
		Events:       []Event{{Type: corev1.EventTypeWarning, Reason: v1alpha1.ReasonInvalidSpec, Message: text}},
		RequeueAfter: 5 * time.Second,
	}, Decide(input(g, 0)))
}
