package metrics

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// runBuckets spread from a second to eight hours: item runs range from quick checks to backups.
var runBuckets = [...]float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800}

var (
	itemRunLabels   = []string{"namespace", "group", "item", "result"}
	runDurationDesc = prometheus.NewDesc("oaat_item_run_duration_seconds", "Duration of finished item runs, from the pod's start to its end.", itemRunLabels, nil)
	runTotalDesc    = prometheus.NewDesc("oaat_item_runs_total", "Finished item runs.", itemRunLabels, nil)
)

// itemRuns are the finished runs of one item with one result: the histogram of their durations
// (counts per bucket of runBuckets, not cumulative; the runs above the last bound are count minus
// their sum), the sum of the durations in seconds, and the count, which is also the counter's
// value. created is when the first of them was observed, the series' created timestamp.
type itemRuns struct {
	buckets [len(runBuckets)]uint64
	count   uint64
	sum     float64
	created time.Time
}

// itemResult names the series of an item within its group.
type itemResult struct{ item, result string }

// itemRunCollector keeps oaat_item_run_duration_seconds and oaat_item_runs_total, one series of
// each per item and result, and makes their samples at scrape time. A HistogramVec and a
// CounterVec keep the same series for about 2.5 KB an item (a histogram's two sets of atomic
// counts, its exemplar slots, its label pairs, the counter beside it); this keeps 15 counts, the
// count, the sum and the created time: a thousand groups of ten items hold ten thousand.
type itemRunCollector struct {
	mu     sync.Mutex
	groups map[groupKey]map[itemResult]*itemRuns
}

func newItemRunCollector() *itemRunCollector {
	return &itemRunCollector{groups: map[groupKey]map[itemResult]*itemRuns{}}
}

// observe records one finished run of d.
func (c *itemRunCollector) observe(key groupKey, item, result string, d time.Duration, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	series := c.groups[key]
	if series == nil {
		series = map[itemResult]*itemRuns{}
		c.groups[key] = series
	}
	runs := series[itemResult{item, result}]
	if runs == nil {
		runs = &itemRuns{created: now}
		series[itemResult{item, result}] = runs
	}
	secs := d.Seconds()
	// The first bucket whose upper bound is at least secs, as a Prometheus histogram counts.
	if i, _ := slices.BinarySearch(runBuckets[:], secs); i < len(runs.buckets) {
		runs.buckets[i]++
	}
	runs.count++
	runs.sum += secs
}

// retain drops the series of the group's items for which has is false.
func (c *itemRunCollector) retain(key groupKey, has func(item string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.groups[key] {
		if !has(k.item) {
			delete(c.groups[key], k)
		}
	}
	if len(c.groups[key]) == 0 {
		delete(c.groups, key)
	}
}

// forget drops the series of the group.
func (c *itemRunCollector) forget(key groupKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.groups, key)
}

// KeptByTheOperator says that the collector's values are what the operator observed, kept in
// memory, not read from the cache at scrape time: the metrics reference (hack/docgen) says so.
func (c *itemRunCollector) KeptByTheOperator() {}

// Describe sends the descriptions of the histogram and the counter.
func (c *itemRunCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runDurationDesc
	ch <- runTotalDesc
}

// itemSeries is one item's runs with one result, as a scrape sends them.
type itemSeries struct {
	group groupKey
	itemResult
	itemRuns
}

// Collect sends, for every item and result that ran, its histogram and its counter; it copies
// the counts under the lock and makes the samples after, so that a scrape does not hold up the
// reconciles that record runs.
func (c *itemRunCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.snapshot() {
		cumulative := make(map[float64]uint64, len(runBuckets))
		var n uint64
		for i, upper := range runBuckets {
			n += s.buckets[i]
			cumulative[upper] = n
		}
		labels := []string{s.group.namespace, s.group.group, s.item, s.result}
		ch <- prometheus.MustNewConstHistogramWithCreatedTimestamp(runDurationDesc, s.count, s.sum, cumulative, s.created, labels...)
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(runTotalDesc, prometheus.CounterValue, float64(s.count), s.created, labels...)
	}
}

// snapshot copies every series.
func (c *itemRunCollector) snapshot() []itemSeries {
	c.mu.Lock()
	defer c.mu.Unlock()
	var all []itemSeries
	for key, series := range c.groups {
		for k, runs := range series {
			all = append(all, itemSeries{group: key, itemResult: k, itemRuns: *runs})
		}
	}
	return all
}
