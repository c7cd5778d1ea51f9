package support

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProbes(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := t0.Add
	pod := func(name string, created, ended time.Duration, phase corev1.PodPhase) PodRecord {
		r := PodRecord{Name: name, Created: metav1.NewTime(at(created)), Phase: phase}
		if ended >= 0 {
			r.Ended = at(ended)
		}
		return r
	}
	const live = -1
	names := func(records []PodRecord) []string {
		var n []string
		for _, r := range records {
			n = append(n, r.Name)
		}
		return n
	}
	tests := []struct {
		name        string
		records     []PodRecord
		wantProbes  []string
		wantBesides int
	}{{
		name: "the runs of the opening's second are no probes, the runs after the closing probe neither",
		records: []PodRecord{
			pod("opener", -time.Second, 500*time.Millisecond, corev1.PodFailed),
			pod("under-way", 0, 1500*time.Millisecond, corev1.PodFailed),
			pod("probe-1", 3*time.Second, 4*time.Second, corev1.PodFailed),
			pod("probe-2", 7*time.Second, 8*time.Second, corev1.PodFailed),
			pod("closing", 11*time.Second, 12*time.Second, corev1.PodSucceeded),
			pod("next-a", 12*time.Second, 13*time.Second, corev1.PodSucceeded),
			pod("next-b", 12*time.Second, live, corev1.PodRunning),
		},
		wantProbes: []string{"probe-1", "probe-2", "closing"},
	}, {
		name: "a pod beside a probe by more than the slack",
		records: []PodRecord{
			pod("probe-1", 3*time.Second, 5*time.Second, corev1.PodFailed),
			pod("rogue", 4*time.Second, 6*time.Second, corev1.PodFailed),
			pod("closing", 7*time.Second, 8*time.Second, corev1.PodSucceeded),
		},
		wantProbes:  []string{"probe-1", "rogue", "closing"},
		wantBesides: 2,
	}, {
		name: "an overlap within the slack is the watcher's lateness",
		records: []PodRecord{
			pod("probe-1", 3*time.Second, 4*time.Second+400*time.Millisecond, corev1.PodFailed),
			pod("closing", 4*time.Second, 5*time.Second, corev1.PodSucceeded),
		},
		wantProbes: []string{"probe-1", "closing"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			probes, beside := Probes(tc.records, at(time.Second), 500*time.Millisecond)
			if diff := cmp.Diff(tc.wantProbes, names(probes)); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
			if len(beside) != tc.wantBesides {
				t.Errorf("beside %q, want %d", beside, tc.wantBesides)
			}
		})
	}
}
