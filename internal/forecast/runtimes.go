package forecast

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// RunBasis says what the run time a forecast assumes for an item rests on.
type RunBasis string

const (
	// BasisLongest is the longest of the item's own kept runs.
	BasisLongest RunBasis = "Longest"
	// BasisGroupMedian is, for an item that kept no run, the median of the runs the group's items
	// kept.
	BasisGroupMedian RunBasis = "GroupMedian"
	// BasisDefault is, when no item of the group kept a run, Options.DefaultRun.
	BasisDefault RunBasis = "Default"
)

// RunTime is the run time assumed for an item.
type RunTime struct {
	// Item is the item.
	Item string
	// Run is its expected run time (runAssumption).
	Run time.Duration
	// Basis says what Run rests on.
	Basis RunBasis
}

// runAssumption is the run time a forecast assumes for each item of a group. An item that kept
// runs (status.items[].recentRunSeconds) is assumed to take the longest of them, at least a
// second, as the planner expects its runs for avoidOverrun windows. An item that kept none is
// assumed to take the median of all the runs the group's items kept, pooled, at least a second:
// the group's typical run. Its items do the same work on different targets, so a new item is
// likelier to take about what they usually take than what the slowest of them once took; the
// longest would make every item that never ran pessimistic. Only when no item kept a run is the
// run time Options.DefaultRun. The forecast's runs, its plain play and the check of whether a run
// went as the forecast assumed (Due) all read it from here.
type runAssumption struct {
	// unrecorded is the run time of an item that kept no run.
	unrecorded time.Duration
	// basis is what unrecorded rests on: BasisGroupMedian or BasisDefault.
	basis RunBasis
}

// assumeRuns is the run assumption for a group whose items' status is items, defaultRun when
// none of them kept a run.
func assumeRuns(items []v1alpha1.ItemStatus, defaultRun time.Duration) runAssumption {
	var pooled []int64
	for _, it := range items {
		pooled = append(pooled, it.RecentRunSeconds...)
	}
	if len(pooled) == 0 {
		return runAssumption{unrecorded: defaultRun, basis: BasisDefault}
	}
	median := time.Duration(runstats.Median(pooled) * float64(time.Second))
	return runAssumption{unrecorded: max(median, time.Second), basis: BasisGroupMedian}
}

// of is the run time assumed for the item whose status is it.
func (a runAssumption) of(it v1alpha1.ItemStatus) RunTime {
	if len(it.RecentRunSeconds) == 0 {
		return RunTime{Item: it.Name, Run: a.unrecorded, Basis: a.basis}
	}
	longest := time.Duration(max(runstats.Longest(it.RecentRunSeconds), 1)) * time.Second
	return RunTime{Item: it.Name, Run: longest, Basis: BasisLongest}
}
