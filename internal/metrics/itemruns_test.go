package metrics

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

// The collector's histogram and counter are those a HistogramVec and a CounterVec of the same
// buckets would expose for the same runs, durations on a bound, between bounds, below the first
// and above the last included.
func TestItemRunsAsHistogramVec(t *testing.T) {
	runs := []struct {
		group, item, result string
		d                   time.Duration
	}{
		{"backups", "a", "succeeded", 0},
		{"backups", "a", "succeeded", time.Second},
		{"backups", "a", "succeeded", 1500 * time.Millisecond},
		{"backups", "a", "succeeded", 28800 * time.Second},
		{"backups", "a", "succeeded", 30000 * time.Second},
		{"backups", "a", "failed", 299 * time.Second},
		{"backups", "b", "interrupted", 300 * time.Second},
		{"other", "a", "succeeded", 7 * time.Second},
	}
	labels := []string{"namespace", "group", "item", "result"}
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "oaat_item_run_duration_seconds",
		Help: "Duration of finished item runs, from the pod's start to its end.", Buckets: runBuckets[:]}, labels)
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "oaat_item_runs_total", Help: "Finished item runs."}, labels)
	m := NewRunMetrics()
	for _, r := range runs {
		hist.WithLabelValues("ns", r.group, r.item, r.result).Observe(r.d.Seconds())
		total.WithLabelValues("ns", r.group, r.item, r.result).Inc()
		m.Observe("ns", r.group, r.item, r.result, r.d)
	}
	want := prometheus.NewPedanticRegistry()
	want.MustRegister(hist, total)
	got := prometheus.NewPedanticRegistry()
	got.MustRegister(m.items)
	if w, g := exposition(t, want), exposition(t, got); w != g {
		t.Fatalf("exposition:\n%s\nwant, as the vectors expose:\n%s", g, w)
	}
}

// exposition is reg's text exposition.
func exposition(t *testing.T, reg prometheus.Gatherer) string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// The series of ten thousand items (a thousand groups of ten) take a few MB, not the 25 MB a
// HistogramVec and a CounterVec took (about 2.5 KB an item): 1 KB an item at most.
func TestItemRunsMemory(t *testing.T) {
	const groups, items = 1000, 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := NewRunMetrics()
	for g := range groups {
		group := fmt.Sprintf("g-%d", g)
		for i := range items {
			m.Observe("bench-scale", group, fmt.Sprintf("item-%d", i), "succeeded", 20*time.Second)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := testutil.CollectAndCount(m.items, "oaat_item_runs_total"); got != groups*items {
		t.Fatalf("%d series, want %d", got, groups*items)
	}
	perItem := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / (groups * items)
	t.Logf("%d B an item", perItem)
	if perItem > 1024 {
		t.Fatalf("%d B an item, want at most 1 KB", perItem)
	}
	runtime.KeepAlive(m)
}
