package support

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

const testLabel = "test.oaat.io/test-pod"

var start = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// pod returns a pod of the group in the namespace, in the phase, whose UID derives from its name.
func pod(namespace, group, name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace, UID: types.UID("uid-" + namespace + "-" + name),
			Labels:            map[string]string{v1alpha1.LabelGroup: group, v1alpha1.LabelRun: "1"},
			Annotations:       map[string]string{v1alpha1.AnnotationItem: "item-" + name},
			CreationTimestamp: metav1.NewTime(start),
		},
		Status: corev1.PodStatus{Phase: phase},
	}
}

// beingDeleted gives the pod a deletionTimestamp.
func beingDeleted(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: start}
	return p
}

// forceDeleted gives the pod a deletionTimestamp with no grace period, as the API server does to
// a pod force-deleted or never scheduled that a finalizer keeps.
func forceDeleted(p *corev1.Pod) *corev1.Pod {
	p.DeletionGracePeriodSeconds = new(int64)
	return beingDeleted(p)
}

// testPod marks the pod as one a test created itself.
func testPod(p *corev1.Pod) *corev1.Pod {
	p.Labels[testLabel] = "rogue"
	return p
}

func added(p *corev1.Pod) watch.Event    { return watch.Event{Type: watch.Added, Object: p} }
func modified(p *corev1.Pod) watch.Event { return watch.Event{Type: watch.Modified, Object: p} }
func deleted(p *corev1.Pod) watch.Event  { return watch.Event{Type: watch.Deleted, Object: p} }

func newTestTracker(history bool) (*OverlapTracker, *clocktesting.FakePassiveClock) {
	clk := clocktesting.NewFakePassiveClock(start)
	return NewOverlapTracker(OverlapTrackerOptions{TestPodLabel: testLabel, KeepHistory: history, Clock: clk}), clk
}

func observeAll(t *testing.T, tracker *OverlapTracker, events ...watch.Event) {
	t.Helper()
	for _, ev := range events {
		if err := tracker.Observe(ev); err != nil {
			t.Fatalf("Observe(%s): %v", ev.Type, err)
		}
	}
}

func overlapStrings(overlaps []Overlap) []string {
	var out []string
	for _, o := range overlaps {
		out = append(out, fmt.Sprintf("%s %v", o.Group, o.Pods))
	}
	return out
}

func expectOverlaps(t *testing.T, got []Overlap, want ...string) {
	t.Helper()
	if g := overlapStrings(got); strings.Join(g, "|") != strings.Join(want, "|") {
		t.Errorf("overlaps = %q, want %q", g, want)
	}
}

func TestOverlapTrackerLivePods(t *testing.T) {
	tests := []struct {
		name   string
		events []watch.Event
		want   []string
	}{
		{
			name: "one pod after another",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodPending)),
				modified(pod("ns", "g", "a", corev1.PodRunning)),
				modified(pod("ns", "g", "a", corev1.PodSucceeded)),
				added(pod("ns", "g", "b", corev1.PodPending)),
				modified(pod("ns", "g", "b", corev1.PodFailed)),
				added(pod("ns", "g", "c", corev1.PodPending)),
			},
		},
		{
			name: "a second pod before the first ended",
			events: []watch.Event{
				added(pod("ns", "g", "b", corev1.PodPending)),
				added(pod("ns", "g", "a", corev1.PodPending)),
				modified(pod("ns", "g", "a", corev1.PodRunning)),
				modified(pod("ns", "g", "b", corev1.PodSucceeded)),
				modified(pod("ns", "g", "a", corev1.PodRunning)),
			},
			want: []string{"ns/g [a b]", "ns/g [a b]"},
		},
		{
			name: "a deleted pod is no longer live",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				deleted(pod("ns", "g", "a", corev1.PodRunning)),
				added(pod("ns", "g", "b", corev1.PodPending)),
			},
		},
		{
			name: "a pod being deleted is still live",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				modified(beingDeleted(pod("ns", "g", "a", corev1.PodRunning))),
				added(pod("ns", "g", "b", corev1.PodPending)),
			},
			want: []string{"ns/g [a b]"},
		},
		{
			name: "a pod deleted without a grace period, kept by a finalizer, is no longer live",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				modified(forceDeleted(pod("ns", "g", "a", corev1.PodRunning))),
				added(pod("ns", "g", "b", corev1.PodPending)),
			},
		},
		{
			name: "a pod first shown by a MODIFIED event is live",
			events: []watch.Event{
				modified(pod("ns", "g", "a", corev1.PodRunning)),
				added(pod("ns", "g", "b", corev1.PodPending)),
			},
			want: []string{"ns/g [a b]"},
		},
		{
			name: "a pod first shown terminal is never live",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodSucceeded)),
				added(pod("ns", "g", "b", corev1.PodPending)),
			},
		},
		{
			name: "groups are told apart by namespace and name",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				added(pod("other", "g", "b", corev1.PodRunning)),
				added(pod("ns", "h", "c", corev1.PodRunning)),
			},
		},
		{
			name: "test pods are left out",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				added(testPod(pod("ns", "g", "rogue", corev1.PodRunning))),
			},
		},
		{
			name: "events of other objects are ignored",
			events: []watch.Event{
				added(pod("ns", "g", "a", corev1.PodRunning)),
				{Type: watch.Added, Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}}},
				{Type: watch.Bookmark, Object: pod("ns", "g", "c", corev1.PodRunning)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracker, _ := newTestTracker(false)
			observeAll(t, tracker, tt.events...)
			expectOverlaps(t, tracker.Overlaps(), tt.want...)
		})
	}
}

func TestOverlapTrackerWithoutTestPodLabel(t *testing.T) {
	tracker := NewOverlapTracker(OverlapTrackerOptions{})
	observeAll(t, tracker, added(pod("ns", "g", "a", corev1.PodRunning)), added(testPod(pod("ns", "g", "rogue", corev1.PodRunning))))
	expectOverlaps(t, tracker.Overlaps(), "ns/g [a rogue]")
}

func TestOverlapTrackerRecordsWhenAndWhere(t *testing.T) {
	tracker, clk := newTestTracker(false)
	observeAll(t, tracker, added(pod("ns", "g", "a", corev1.PodRunning)), added(pod("other", "g", "x", corev1.PodRunning)))
	clk.SetTime(start.Add(time.Minute))
	observeAll(t, tracker, added(pod("ns", "g", "b", corev1.PodRunning)))
	clk.SetTime(start.Add(2 * time.Minute))
	observeAll(t, tracker, added(pod("other", "g", "y", corev1.PodRunning)))

	expectOverlaps(t, tracker.OverlapsIn("ns"), "ns/g [a b]")
	expectOverlaps(t, tracker.OverlapsIn("other"), "other/g [x y]")
	expectOverlaps(t, tracker.OverlapsIn("none"))
	overlaps := tracker.Overlaps()
	expectOverlaps(t, overlaps, "ns/g [a b]", "other/g [x y]")
	if !overlaps[0].At.Equal(start.Add(time.Minute)) || !overlaps[1].At.Equal(start.Add(2*time.Minute)) {
		t.Errorf("overlaps at %s and %s, want %s and %s", overlaps[0].At, overlaps[1].At,
			start.Add(time.Minute), start.Add(2*time.Minute))
	}
	if got, want := overlaps[0].String(), "2024-06-01T12:01:00Z: group ns/g had live pods [a b]"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestOverlapTrackerErrorEvent(t *testing.T) {
	tracker, _ := newTestTracker(false)
	err := tracker.Observe(watch.Event{Type: watch.Error, Object: &metav1.Status{Message: "too old resource version"}})
	if err == nil || !strings.Contains(err.Error(), "too old resource version") {
		t.Errorf("Observe(ERROR) = %v, want an error that names the status", err)
	}
}

func TestOverlapTrackerHistory(t *testing.T) {
	tracker, clk := newTestTracker(true)
	observeAll(t, tracker,
		added(pod("ns", "g", "a", corev1.PodPending)),
		modified(pod("ns", "g", "a", corev1.PodRunning)),
		added(pod("ns", "g", "b", corev1.PodPending)),
	)
	clk.SetTime(start.Add(time.Minute))
	observeAll(t, tracker, modified(pod("ns", "g", "a", corev1.PodSucceeded)))
	clk.SetTime(start.Add(2 * time.Minute))
	observeAll(t, tracker,
		deleted(pod("ns", "g", "a", corev1.PodSucceeded)),
		added(pod("ns", "h", "c", corev1.PodRunning)),
		added(pod("other", "g", "d", corev1.PodRunning)),
	)

	recs := tracker.PodsOf("ns", "g")
	if len(recs) != 2 {
		t.Fatalf("PodsOf(ns, g) = %v, want the records of a and b", recs)
	}
	a, b := recs[0], recs[1]
	if a.Name != "a" || a.UID != "uid-ns-a" || a.Item != "item-a" || a.Run != "1" || !a.Created.Time.Equal(start) {
		t.Errorf("record of a = %+v", a)
	}
	if a.Phase != corev1.PodSucceeded || !a.Ended.Equal(start.Add(time.Minute)) {
		t.Errorf("a: phase %s, ended %s; want Succeeded, ended when first seen terminal (%s)", a.Phase, a.Ended, start.Add(time.Minute))
	}
	if b.Name != "b" || b.Phase != corev1.PodPending || !b.Ended.IsZero() {
		t.Errorf("record of b = %+v, want live and Pending", b)
	}
	if got := tracker.PodsOf("ns", "none"); len(got) != 0 {
		t.Errorf("PodsOf(ns, none) = %v, want none", got)
	}

	// The records are copies.
	recs[0].Name = "changed"
	if tracker.PodsOf("ns", "g")[0].Name != "a" {
		t.Error("PodsOf returned the tracker's own records")
	}

	want := "group g:\n" +
		"  a (item \"item-a\", run 1, created 2024-06-01T12:00:00Z, phase Succeeded), ended 2024-06-01T12:01:00Z\n" +
		"  b (item \"item-b\", run 1, created 2024-06-01T12:00:00Z, phase Pending), live\n" +
		"group h:\n" +
		"  c (item \"item-c\", run 1, created 2024-06-01T12:00:00Z, phase Running), live\n" +
		"overlap: 2024-06-01T12:00:00Z: group ns/g had live pods [a b]\n"
	if got := tracker.Describe("ns"); got != want {
		t.Errorf("Describe(ns) =\n%s\nwant\n%s", got, want)
	}
}

func TestOverlapTrackerWithoutHistory(t *testing.T) {
	tracker, _ := newTestTracker(false)
	observeAll(t, tracker, added(pod("ns", "g", "a", corev1.PodRunning)), added(pod("ns", "g", "b", corev1.PodRunning)))
	if got := tracker.PodsOf("ns", "g"); len(got) != 0 {
		t.Errorf("PodsOf without history = %v, want none", got)
	}
	if got, want := tracker.Describe("ns"), "overlap: 2024-06-01T12:00:00Z: group ns/g had live pods [a b]\n"; got != want {
		t.Errorf("Describe without history = %q, want %q", got, want)
	}
}

func TestOverlapTrackerMaxLive(t *testing.T) {
	tracker, _ := newTestTracker(false)
	if got := tracker.MaxLive("ns", "g"); got != 0 {
		t.Errorf("MaxLive before any event = %d, want 0", got)
	}
	observeAll(t, tracker,
		added(pod("ns", "g", "a", corev1.PodSucceeded)), // never live
		added(pod("ns", "g", "b", corev1.PodRunning)),
		modified(pod("ns", "g", "b", corev1.PodSucceeded)),
		added(pod("ns", "g", "c", corev1.PodPending)),
		added(pod("other", "g", "d", corev1.PodRunning)),
		added(pod("other", "g", "e", corev1.PodRunning)),
		added(testPod(pod("ns", "g", "rogue", corev1.PodRunning))),
	)
	if got := tracker.MaxLive("ns", "g"); got != 1 {
		t.Errorf("MaxLive(ns, g) = %d, want 1", got)
	}
	if got := tracker.MaxLive("other", "g"); got != 2 {
		t.Errorf("MaxLive(other, g) = %d, want 2", got)
	}
}

func TestOverlapTrackerKey(t *testing.T) {
	shared := map[string]string{"g1": "nas", "g2": "nas"}
	tracker := NewOverlapTracker(OverlapTrackerOptions{Key: func(p *corev1.Pod) string {
		return shared[p.Labels[v1alpha1.LabelGroup]]
	}})
	observeAll(t, tracker,
		added(pod("ns", "g1", "a", corev1.PodRunning)),
		added(pod("ns", "g3", "c", corev1.PodRunning)), // names no lock: left out
		added(pod("ns", "g2", "b", corev1.PodRunning)),
	)
	if got := tracker.MaxLive("ns", "nas"); got != 2 {
		t.Errorf("MaxLive(ns, nas) = %d, want 2 (pods of two groups sharing the key)", got)
	}
	expectOverlaps(t, tracker.Overlaps(), "ns/nas [a b]")
}
