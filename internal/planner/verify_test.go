package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// verifyType is the OaatType of spec.verify in the tests.
func verifyType() *v1alpha1.OaatType {
	typ := newType()
	typ.Name = "checker"
	typ.Spec.Template.Spec.Containers[0].Args = []string{"verify", "{{oaat_item}}"}
	return typ
}

// verifyView is what a pass does with verifications: the pending one, the run it starts, the
// facts the started pod gets, item a's record (zero once a is gone), condition Verified and the
// verification events.
type verifyView struct {
	Pending string // "item podName result", empty without one
	Started string // "purpose item" of the run started, empty when none
	Wait    string // "waitReason until" of item a, until as an offset from t0, empty when it may run
	// SourceEnv are the OAAT_SOURCE_* variables of the pod created, "NAME=value".
	SourceEnv []string
	A         verifyRecord
	Verified  string // "Status/Reason", empty without the condition
	Events    []v1alpha1.Reason
}

// verifyRecord is an item's record, its instants as offsets from t0 ("" when absent).
type verifyRecord struct {
	LastSuccess, LastFailure, LastVerified, VerifiedRun, LastVerifyFailure string
	FailureCount                                                           int32
}

func verifyViewOf(p Plan) verifyView {
	var v verifyView
	if pv := p.Status.PendingVerification; pv != nil {
		v.Pending = strings.Join([]string{pv.Item, pv.PodName, pv.Result}, " ")
	}
	if cr := p.Status.CurrentRun; cr != nil && p.Create != nil {
		purpose := cr.Purpose
		if purpose == "" {
			purpose = v1alpha1.PurposeRun
		}
		v.Started = string(purpose) + " " + cr.Item
		for _, e := range p.Create.Spec.Containers[0].Env {
			if strings.HasPrefix(e.Name, "OAAT_SOURCE_") {
				v.SourceEnv = append(v.SourceEnv, e.Name+"="+e.Value)
			}
		}
	}
	rel := func(t *metav1.Time) string {
		if t == nil {
			return ""
		}
		return offset(t)
	}
	for _, a := range p.Status.Items {
		if a.Name == "a" {
			v.A = verifyRecord{
				LastSuccess: rel(a.LastSuccess), LastFailure: rel(a.LastFailure), LastVerified: rel(a.LastVerified),
				VerifiedRun: rel(a.VerifiedRunFinishedAt), LastVerifyFailure: rel(a.LastVerifyFailure), FailureCount: a.FailureCount,
			}
			if a.WaitReason == v1alpha1.WaitCoolingOff {
				v.Wait = string(a.WaitReason) + " " + rel(a.NextEligibleAt)
			}
		}
	}
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionVerified); c != nil {
		v.Verified = string(c.Status) + "/" + c.Reason
	}
	for _, r := range reasons(p) {
		if strings.HasPrefix(string(r), "Verification") {
			v.Events = append(v.Events, r)
		}
	}
	return v
}

// TestVerification runs one pass of Decide in a group of items a and b with spec.verify (b
// succeeded at t0, so that it waits its hour), at t0+1m.
func TestVerification(t *testing.T) {
	// succeeded: run 1 of item a ends at t0+1m, handing over "snap-1".
	succeeded := func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
		t.Helper()
		running(t, g, "a", 1, at(0))
		pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))
		pod.Status.ContainerStatuses[0].State.Terminated.Message = "snap-1"
		return []corev1.Pod{pod}
	}
	none := func(*testing.T, *v1alpha1.OaatGroup) []corev1.Pod { return nil }
	pending := func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
		t.Helper()
		itemStatus(g, "a").LastSuccess = at(-10 * time.Minute)
		g.Status.PendingVerification = &v1alpha1.PendingVerification{Item: "a", PodName: runPodName(g), FinishedAt: *at(-10 * time.Minute), Result: "snap-1"}
		return nil
	}
	passed := "True/VerificationsPassed"
	for _, tc := range []struct {
		name  string
		setup func(g *v1alpha1.OaatGroup)
		pods  func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod
		in    func(in *Input)
		want  func(g *v1alpha1.OaatGroup) verifyView
	}{
		{name: "a success makes its verification due, and it takes the next turn with the run's facts", pods: succeeded,
			want: func(g *v1alpha1.OaatGroup) verifyView {
				return verifyView{Pending: "a " + runPodName(g) + " snap-1", Started: "Verify a",
					SourceEnv: []string{"OAAT_SOURCE_POD=" + runPodName(g), "OAAT_SOURCE_FINISHED_AT=" + at(time.Minute).UTC().Format(time.RFC3339),
						"OAAT_SOURCE_EXIT_CODE=0", "OAAT_SOURCE_RESULT=snap-1"},
					A: verifyRecord{LastSuccess: "1m0s"}, Verified: passed}
			}},
		{name: "verified within spec.verify.every: the success is not verified", pods: succeeded,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.Verify.Every = "1d"
				itemStatus(g, "a").LastVerified = at(-time.Hour)
			},
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{A: verifyRecord{LastSuccess: "1m0s", LastVerified: "-1h0m0s"}, Verified: passed}
			}},
		{name: "spec.verify.every passed: the success is verified", pods: succeeded,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.Verify.Every = "1d"
				itemStatus(g, "a").LastVerified = at(-25 * time.Hour)
			},
			want: func(g *v1alpha1.OaatGroup) verifyView {
				return verifyView{Pending: "a " + runPodName(g) + " snap-1", Started: "Verify a",
					SourceEnv: []string{"OAAT_SOURCE_POD=" + runPodName(g), "OAAT_SOURCE_FINISHED_AT=" + at(time.Minute).UTC().Format(time.RFC3339),
						"OAAT_SOURCE_EXIT_CODE=0", "OAAT_SOURCE_RESULT=snap-1"},
					A: verifyRecord{LastSuccess: "1m0s", LastVerified: "-25h0m0s"}, Verified: passed}
			}},
		{name: "the verification succeeds: recorded apart from the runs", pods: verifying(0, ""),
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{A: verifyRecord{LastSuccess: "-10m0s", LastVerified: "1m0s", VerifiedRun: "-10m0s"},
					Verified: passed, Events: []v1alpha1.Reason{v1alpha1.ReasonVerificationSucceeded}}
			}},
		{name: "the verification fails: not a failure of the item, which is due again after failureCoolOff", pods: verifying(1, ""),
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{A: verifyRecord{LastSuccess: "-10m0s", LastVerifyFailure: "1m0s"}, Wait: "CoolingOff 11m0s",
					Verified: "False/VerificationFailed", Events: []v1alpha1.Reason{v1alpha1.ReasonVerificationFailed}}
			}},
		{name: "failureCoolOff after the failed verification: the item runs again", pods: none,
			setup: func(g *v1alpha1.OaatGroup) {
				itemStatus(g, "a").LastSuccess = at(-30 * time.Minute)
				itemStatus(g, "a").LastVerifyFailure = at(-9 * time.Minute)
			},
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{Started: "Run a", A: verifyRecord{LastSuccess: "-30m0s", LastVerifyFailure: "-9m0s"},
					Verified: "False/VerificationFailed"}
			}},
		{name: "the verification fails with onFailure AlertOnly: the item keeps its schedule", pods: verifying(1, ""),
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.Verify.OnFailure = v1alpha1.VerifyAlertOnly },
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{A: verifyRecord{LastSuccess: "-10m0s", LastVerifyFailure: "1m0s"},
					Verified: "False/VerificationFailed", Events: []v1alpha1.Reason{v1alpha1.ReasonVerificationFailed}}
			}},
		{name: "an interrupted verification stays pending and runs again", pods: verifying(137, v1alpha1.StopInterrupted),
			want: func(g *v1alpha1.OaatGroup) verifyView {
				return verifyView{Pending: "a " + runPodName(g) + " snap-1", Started: "Verify a",
					SourceEnv: []string{"OAAT_SOURCE_POD=" + runPodName(g), "OAAT_SOURCE_FINISHED_AT=" + at(-10*time.Minute).UTC().Format(time.RFC3339),
						"OAAT_SOURCE_RESULT=snap-1"},
					A: verifyRecord{LastSuccess: "-10m0s"}, Verified: passed, Events: []v1alpha1.Reason{v1alpha1.ReasonVerificationInterrupted}}
			}},
		{name: "the verification failed in mode EachOnce: the item is not done in its round", pods: none,
			setup: func(g *v1alpha1.OaatGroup) {
				g.Spec.Mode = v1alpha1.ModeEachOnce
				g.Status.RoundStartedAt = at(-time.Hour)
				itemStatus(g, "a").LastSuccess = at(-30 * time.Minute)
				itemStatus(g, "a").LastVerifyFailure = at(-9 * time.Minute)
			},
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{Started: "Run a", A: verifyRecord{LastSuccess: "-30m0s", LastVerifyFailure: "-9m0s"},
					Verified: "False/VerificationFailed"}
			}},
		{name: "a suspended group: the verification waits", pods: pending,
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.Suspend = true },
			want: func(g *v1alpha1.OaatGroup) verifyView {
				return verifyView{Pending: "a " + runPodName(g) + " snap-1", A: verifyRecord{LastSuccess: "-10m0s"}, Verified: passed}
			}},
		{name: "spec.verify removed: the pending verification goes with it", pods: pending,
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.Verify = nil },
			want: func(*v1alpha1.OaatGroup) verifyView {
				return verifyView{A: verifyRecord{LastSuccess: "-10m0s"}}
			}},
		{name: "the item removed: its pending verification goes", pods: pending,
			setup: func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = []string{"b"} },
			want:  func(*v1alpha1.OaatGroup) verifyView { return verifyView{Verified: passed} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGroup("a", "b")
			g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
			itemStatus(g, "b").LastSuccess = at(0)
			if tc.setup != nil {
				tc.setup(g)
			}
			in := input(g, time.Minute, tc.pods(t, g)...)
			in.VerifyType = verifyType()
			p := Decide(in)
			if diff := cmp.Diff(tc.want(g), verifyViewOf(p)); diff != "" {
				t.Errorf("verifications (-want +got):\n%s", diff)
			}
		})
	}
}

// runPodName is the pod of run 1 of item a, the run the tests verify.
func runPodName(g *v1alpha1.OaatGroup) string { return podbuild.Name(g.Name, "a", 1) }

// verifying: run 2 is the verification of run 1 of item a, which ended at t0-10m; it ends at
// t0+1m with code, stopped for stop if not empty.
func verifying(code int32, stop v1alpha1.StopReason) func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
	return func(t *testing.T, g *v1alpha1.OaatGroup) []corev1.Pod {
		t.Helper()
		itemStatus(g, "a").LastSuccess = at(-10 * time.Minute)
		g.Status.PendingVerification = &v1alpha1.PendingVerification{Item: "a", PodName: runPodName(g), FinishedAt: *at(-10 * time.Minute), Result: "snap-1"}
		running(t, g, "a", 2, at(0))
		itemStatus(g, "a").LastStarted = at(-20 * time.Minute)
		g.Status.CurrentRun.Purpose = v1alpha1.PurposeVerify
		g.Status.CurrentRun.StopReason = stop
		pod, err := podbuild.Build(podbuild.Input{Group: g, Template: verifyType().Spec.Template, Item: "a", Run: 2, Verifies: g.Status.PendingVerification})
		if err != nil {
			t.Fatal(err)
		}
		phase, reason := corev1.PodSucceeded, "Completed"
		if code != 0 {
			phase, reason = corev1.PodFailed, "Error"
		}
		pod.Status.Phase = phase
		return []corev1.Pod{finished(*pod, code, reason, at(time.Minute))}
	}
}

// TestVerificationFailureNotified: a failed verification is a transition sent to the sinks.
func TestVerificationFailureNotified(t *testing.T) {
	g := newGroup("a", "b")
	g.UID = "u1"
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker", OnFailure: v1alpha1.VerifyAlertOnly}
	itemStatus(g, "b").LastSuccess = at(0)
	in := input(g, time.Minute, verifying(1, "")(t, g)...)
	in.VerifyType = verifyType()
	in.Notify = Notify{ClusterSink: true}
	if diff := cmp.Diff(notifyView{Outbox: true, Pending: []string{"0 VerificationFailed a"}, Next: 1, Notified: "True/SinksReached"},
		notifyViewOf(Decide(in))); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// TestVerificationNeedsItsType: a group whose spec.verify names an OaatType that does not exist
// is not ready, as for its own OaatType.
func TestVerificationNeedsItsType(t *testing.T) {
	g := newGroup("a")
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
	p := Decide(input(g, 0))
	c := condition(t, p, v1alpha1.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != string(v1alpha1.ReasonOaatTypeNotFound) || !strings.Contains(c.Message, "spec.verify.oaatType") {
		t.Errorf("Ready %s/%s %q, want False/OaatTypeNotFound naming spec.verify.oaatType", c.Status, c.Reason, c.Message)
	}
	if p.Create != nil {
		t.Errorf("pod %s created by a group that is not ready", p.Create.Name)
	}
}

// TestVerificationResultBounded: the run's termination message is cut to 1 KiB before it is
// kept in status and given to the verification.
func TestVerificationResultBounded(t *testing.T) {
	g := newGroup("a")
	g.Spec.Verify = &v1alpha1.Verify{OaatType: "checker"}
	running(t, g, "a", 1, at(0))
	pod := finished(runPod(t, g, "a", 1, corev1.PodSucceeded), 0, "Completed", at(time.Minute))
	pod.Status.ContainerStatuses[0].State.Terminated.Message = strings.Repeat("x", 4096)
	in := input(g, time.Minute, pod)
	in.VerifyType = verifyType()
	pv := Decide(in).Status.PendingVerification
	if pv == nil {
		t.Fatal("no pending verification")
	}
	if n := len(pv.Result); n > v1alpha1.MaxSourceResult || !strings.HasPrefix(pv.Result, "xxx") {
		t.Errorf("result of %d bytes, want the message cut to %d", n, v1alpha1.MaxSourceResult)
	}
}
