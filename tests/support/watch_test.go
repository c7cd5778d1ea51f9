package support

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// fakeCluster answers the pod list with the pods and resource version 10, and the first pod
// watch with watcher; it records the options of each.
func fakeCluster(t *testing.T, watcher *watch.FakeWatcher, pods ...corev1.Pod) *fake.Clientset {
	t.Helper()
	clientset := fake.NewClientset()
	clientset.PrependReactor("list", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if sel := action.(k8stesting.ListAction).GetListRestrictions().Labels.String(); sel != v1alpha1.LabelGroup {
			t.Errorf("pods listed with selector %q, want %q", sel, v1alpha1.LabelGroup)
		}
		return true, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: pods}, nil
	})
	watched := false
	clientset.PrependWatchReactor("pods", func(action k8stesting.Action) (bool, watch.Interface, error) {
		if watched {
			t.Error("the pods were watched again")
			return true, nil, apierrors.NewResourceExpired("watched again")
		}
		watched = true
		if sel := action.(k8stesting.WatchAction).GetWatchRestrictions().Labels.String(); sel != v1alpha1.LabelGroup {
			t.Errorf("pods watched with selector %q, want %q", sel, v1alpha1.LabelGroup)
		}
		if rv := action.(k8stesting.WatchAction).GetWatchRestrictions().ResourceVersion; rv != "10" {
			t.Errorf("pods watched from resource version %q, want the list's, 10", rv)
		}
		return true, watcher, nil
	})
	return clientset
}

// withVersion returns the pod with a resource version, which a RetryWatcher requires.
func withVersion(p *corev1.Pod, rv string) *corev1.Pod {
	p.ResourceVersion = rv
	return p
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchPodsFeedsTheTracker(t *testing.T) {
	watcher := watch.NewFake()
	clientset := fakeCluster(t, watcher, *withVersion(pod("ns", "g", "a", corev1.PodRunning), "9"))
	tracker, _ := newTestTracker(true)
	w, err := WatchPods(context.Background(), clientset, "ns", tracker)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Listed(); len(got) != 1 || got[0] != "a" {
		t.Errorf("Listed() = %v, want [a]", got)
	}

	watcher.Add(withVersion(pod("ns", "g", "b", corev1.PodPending), "11"))
	eventually(t, "the overlap of a and b", func() bool { return len(tracker.Overlaps()) == 1 })
	expectOverlaps(t, tracker.Overlaps(), "ns/g [a b]")
	if err := w.Err(); err != nil {
		t.Errorf("Err() of a sound watch: %v", err)
	}
	if err := w.Stop(); err != nil {
		t.Errorf("Stop() of a sound watch: %v", err)
	}
}

func TestWatchPodsReportsABrokenWatch(t *testing.T) {
	watcher := watch.NewFake()
	tracker, _ := newTestTracker(false)
	w, err := WatchPods(context.Background(), fakeCluster(t, watcher), metav1.NamespaceAll, tracker)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Listed(); len(got) != 0 {
		t.Errorf("Listed() = %v, want none", got)
	}
	// A RetryWatcher gives up on 410 Gone: it passes the error on and ends.
	watcher.Error(&apierrors.NewResourceExpired("too old resource version").ErrStatus)
	eventually(t, "the watch to report the error", func() bool { return w.Err() != nil })
	if err := w.Err(); !strings.Contains(err.Error(), "too old resource version") {
		t.Errorf("Err() = %v, want the watch's error", err)
	}
	if err := w.Stop(); err == nil {
		t.Error("Stop() of a broken watch: no error")
	}
}

func TestWatchPodsFailsWhenTheListFails(t *testing.T) {
	clientset := fake.NewClientset()
	clientset.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "", nil)
	})
	if _, err := WatchPods(context.Background(), clientset, "ns", NewOverlapTracker(OverlapTrackerOptions{})); err == nil {
		t.Error("WatchPods with a list that fails: no error")
	}
}
