package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/statusview"
)

// runResult is what an in-process command returned.
type runResult struct {
	stdout, stderr string
	err            error
}

// startRun runs `kubectl oaat run args...` in the background and returns where its result arrives.
func startRun(ctx context.Context, ns string, args ...string) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		stdout, stderr, err := kubectlOaat(ctx, ns, append([]string{"run"}, args...)...)
		done <- runResult{stdout: stdout, stderr: stderr, err: err}
	}()
	return done
}

// receive returns the result of a command started with startRun, failing the test if it takes
// more than 20 seconds.
func receive(t *testing.T, done <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-done:
		t.Logf("stdout:\n%sstderr:\n%s", r.stdout, r.stderr)
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("kubectl oaat run --wait did not return")
		return runResult{}
	}
}

func TestRunWaitFollowsTheRunToItsEnd(t *testing.T) {
	tests := []struct {
		name    string
		final   v1alpha1.OaatRunStatus
		wantErr string // "" for success
	}{
		{name: "succeeded", final: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunSucceeded, Reason: "Completed", PodName: "backups-item1-x-1", ExitCode: ptr.To[int32](0)}},
		{name: "failed", final: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunFailed, Reason: "Error", Message: "the pod failed", PodName: "backups-item1-x-1", ExitCode: ptr.To[int32](3)},
			wantErr: "did not succeed: Failed Error: the pod failed (pod backups-item1-x-1, exit 3)"},
		{name: "rejected", final: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(v1alpha1.ReasonDuplicate), Message: "an older request for item1 is pending"},
			wantErr: "did not succeed: Rejected Duplicate: an older request for item1 is pending"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			newGroup(t, ns, "backups", "item1")
			done := startRun(t.Context(), ns, "backups", "item1", "--wait", "--timeout", "1m")

			run := waitForOneRun(t, ns)
			setRunStatus(t, run, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued), Message: "waits for item2 to finish"})
			if tt.final.Phase != v1alpha1.OaatRunRejected {
				// Each state stays long enough for the watch to see it: each one is a line.
				time.Sleep(300 * time.Millisecond)
				setRunStatus(t, run, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: "backups-item1-x-1"})
			}
			time.Sleep(300 * time.Millisecond)
			setRunStatus(t, run, tt.final)
			r := receive(t, done)

			if tt.wantErr == "" && r.err != nil {
				t.Fatalf("run --wait: %v, want success", r.err)
			}
			if tt.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr)) {
				t.Fatalf("run --wait: error %v, want one containing %q", r.err, tt.wantErr)
			}
			lines := []string{`oaatrun\.oaat\.io/` + run.Name + ` created`, `\d\d:\d\d:\d\d Pending Queued: waits for item2 to finish`}
			if tt.final.Phase != v1alpha1.OaatRunRejected {
				lines = append(lines, `\d\d:\d\d:\d\d InProgress \(pod backups-item1-x-1\)`)
			}
			lines = append(lines, `\d\d:\d\d:\d\d `+regexp.QuoteMeta(statusview.RunState(&v1alpha1.OaatRun{Status: tt.final})))
			if want := regexp.MustCompile(`^` + strings.Join(lines, `\n`) + `\n$`); !want.MatchString(r.stdout) {
				t.Errorf("stdout = %q, want it to match %s", r.stdout, want)
			}
		})
	}
}

func TestRunWaitTimesOut(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "backups", "item1")
	done := startRun(t.Context(), ns, "backups", "item1", "--wait", "--timeout", "1s")

	run := waitForOneRun(t, ns)
	setRunStatus(t, run, v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonGroupNotReady)})
	r := receive(t, done)

	want := "timed out after 1s waiting for oaatrun.oaat.io/" + run.Name + " to finish (phase Pending); the OaatRun remains"
	if r.err == nil || r.err.Error() != want {
		t.Fatalf("run --wait: error %v, want %q", r.err, want)
	}
	if !strings.Contains(r.stdout, " Pending GroupNotReady\n") {
		t.Errorf("stdout = %q, want the Pending line", r.stdout)
	}
}

// shortWatches is a client whose every watch ends after the first change it reports, as watches
// do when a connection drops or the API server times them out.
type shortWatches struct {
	client.WithWatch
	started atomic.Int32
}

// Watch starts a watch that ends after its first Modified event.
func (c *shortWatches) Watch(ctx context.Context, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	w, err := c.WithWatch.Watch(ctx, list, opts...)
	if err != nil {
		return nil, err
	}
	c.started.Add(1)
	ch := make(chan watch.Event)
	proxy := watch.NewProxyWatcher(ch)
	go func() {
		defer close(ch)
		defer w.Stop()
		for ev := range w.ResultChan() {
			select {
			case ch <- ev:
			case <-proxy.StopChan():
				return
			}
			if ev.Type == watch.Modified {
				return
			}
		}
	}()
	return proxy, nil
}

func TestRunWaitResumesWhenTheWatchEnds(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	c, err := client.NewWithWatch(restConfig, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "backups-"},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: "backups", Item: "item1"},
	}
	if err := k8sClient.Create(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	short := &shortWatches{WithWatch: c}
	var out bytes.Buffer
	done := make(chan error, 1)
	key := client.ObjectKeyFromObject(run)
	go func() { done <- waitForRun(t.Context(), short, key, time.Minute, &out) }()

	for _, st := range []v1alpha1.OaatRunStatus{
		{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued)},
		{Phase: v1alpha1.OaatRunInProgress, PodName: "backups-item1-x-1"},
		{Phase: v1alpha1.OaatRunSucceeded, Reason: "Completed", PodName: "backups-item1-x-1"},
	} {
		time.Sleep(300 * time.Millisecond)
		setRunStatus(t, run, st)
	}
	select {
	case err := <-done:
		t.Logf("output after %d watches:\n%s", short.started.Load(), out.String())
		if err != nil {
			t.Fatalf("waitForRun: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waitForRun did not return")
	}
	if !strings.HasSuffix(out.String(), " Succeeded Completed (pod backups-item1-x-1)\n") {
		t.Errorf("output = %q, want it to end with the Succeeded line", out.String())
	}
	if short.started.Load() < 2 {
		t.Errorf("%d watches started, want a new one after the first ended", short.started.Load())
	}
}

func TestRunWaitFailsForAGoneRun(t *testing.T) {
	t.Parallel()
	c, err := client.NewWithWatch(restConfig, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// An OaatRun deleted before the wait began, as one whose TTL was shorter than the way to it.
	err = waitForRun(t.Context(), c, client.ObjectKey{Namespace: newNamespace(t), Name: "backups-gone"}, time.Minute, &bytes.Buffer{})
	if want := "waiting for oaatrun.oaat.io/backups-gone: it no longer exists"; err == nil || err.Error() != want {
		t.Fatalf("waitForRun: error %v, want %q", err, want)
	}
}
