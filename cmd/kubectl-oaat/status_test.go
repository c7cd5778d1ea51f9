package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// newRun creates the OaatRun name of item of group in ns and gives it phase, as the operator would.
func newRun(t *testing.T, ns, name, group, item string, phase v1alpha1.OaatRunPhase) {
	t.Helper()
	run := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item},
	}
	if err := k8sClient.Create(t.Context(), run); err != nil {
		t.Fatalf("creating OaatRun %s: %v", name, err)
	}
	setRunStatus(t, run, v1alpha1.OaatRunStatus{Phase: phase})
}

func TestStatusShowsOnDemandRuns(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "backups", "item1", "item3", "/srv/photos")
	newGroup(t, ns, "quiet", "a")
	// Created in this order, and named so that the same second also sorts them so.
	newRun(t, ns, "backups-a1", "backups", "/srv/photos", v1alpha1.OaatRunPending)
	newRun(t, ns, "backups-b2", "backups", "item1", v1alpha1.OaatRunInProgress)
	newRun(t, ns, "backups-c3", "backups", "item3", v1alpha1.OaatRunPending)
	newRun(t, ns, "backups-d4", "backups", "item3", v1alpha1.OaatRunSucceeded)
	newRun(t, ns, "quiet-e5", "quiet", "a", v1alpha1.OaatRunRejected)

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "status")
	t.Logf("stdout:\n%s", stdout)
	if err != nil {
		t.Fatalf("status: %v (stderr %q)", err, stderr)
	}
	groups := strings.Split(stdout, "\n\n")
	if len(groups) != 3 || !strings.HasPrefix(groups[0], ns+"/backups ") || !strings.HasPrefix(groups[1], ns+"/quiet ") {
		t.Fatalf("want the tables of backups and quiet, got:\n%s", stdout)
	}
	if want := "\n  on demand: 2 pending (/srv/photos, item3), in progress: item1 (backups-b2)"; !strings.HasSuffix(groups[0], want) {
		t.Errorf("the table of backups does not end with %q:\n%s", want, groups[0])
	}
	if strings.Contains(groups[1], "on demand") {
		t.Errorf("the table of quiet, which has only a finished run, has an on-demand line:\n%s", groups[1])
	}

	stdout, _, err = kubectlOaat(t.Context(), ns, "status", "quiet")
	if err != nil || strings.Contains(stdout, "backups") {
		t.Errorf("status quiet: error %v, stdout:\n%s", err, stdout)
	}
}

// setItems writes the group's status as the operator would: its items, one of them running.
func setItems(t *testing.T, ns, name, running string, items ...string) {
	t.Helper()
	g := &v1alpha1.OaatGroup{}
	if err := k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
		t.Fatal(err)
	}
	g.Status.Items = nil
	for _, item := range items {
		g.Status.Items = append(g.Status.Items, v1alpha1.ItemStatus{Name: item})
	}
	g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: running, PodName: name + "-1", StartedAt: metav1.Now()}
	if err := k8sClient.Status().Update(t.Context(), g); err != nil {
		t.Fatal(err)
	}
}

// The API server (or anything between) ends a watch after a while: --request-timeout=3s makes the
// client end each of its watches after 3 seconds (long enough for a list on a loaded machine). status -w resumes the watch and shows later
// changes, and ends without an error when interrupted.
func TestStatusWatchSurvivesTheEndOfAWatch(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "backups", "first")
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Second)
	defer cancel()
	go func() {
		select {
		case <-time.After(7 * time.Second): // after the first two watches ended
			setItems(t, ns, "backups", "after-the-watch-ended", "first", "after-the-watch-ended")
		case <-ctx.Done():
		}
	}()
	stdout, stderr, err := kubectlOaat(ctx, ns, "status", "-w", "--request-timeout=3s")
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if err != nil {
		t.Fatalf("status -w ended with an error: %v", err)
	}
	if !strings.Contains(stdout, "running=after-the-watch-ended") {
		t.Fatal("the change made after the first watch ended was not shown")
	}
}

// status -w lists the groups once, then follows the watch: a burst of changes does not list the
// groups again for each (the OaatRuns are listed on the periodic refresh only).
func TestStatusWatchDoesNotListOnEachEvent(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "busy", "a")
	c, err := client.NewWithWatch(restConfig, client.Options{Scheme: k8sClient.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	var groupLists, runLists atomic.Int32
	counting := interceptor.NewClient(c, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch list.(type) {
			case *v1alpha1.OaatGroupList:
				groupLists.Add(1)
			case *v1alpha1.OaatRunList:
				runLists.Add(1)
			}
			return c.List(ctx, list, opts...)
		},
	})
	var out bytes.Buffer
	o := &statusOptions{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}, watch: true}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- o.follow(ctx, counting, ns, []client.ListOption{client.InNamespace(ns)}) }()
	time.Sleep(500 * time.Millisecond)
	for i := range 10 {
		setItems(t, ns, "busy", fmt.Sprintf("item-%d", i), "a", fmt.Sprintf("item-%d", i))
	}
	if err := <-done; err != nil {
		t.Fatalf("follow: %v", err)
	}
	if !strings.Contains(out.String(), "running=item-9") {
		t.Fatalf("the last change is not shown:\n%s", out.String())
	}
	if n := groupLists.Load(); n != 1 {
		t.Errorf("OaatGroups listed %d times over 10 changes, want once", n)
	}
	// One at the start, then one per refresh (every 2s) over 3s.
	if n := runLists.Load(); n > 3 {
		t.Errorf("OaatRuns listed %d times, want at most 3 (the start and each refresh)", n)
	}
}
