package forecast

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestRunAssumption(t *testing.T) {
	kept := func(name string, seconds ...int64) v1alpha1.ItemStatus {
		return v1alpha1.ItemStatus{Name: name, RecentRunSeconds: seconds}
	}
	for _, tc := range []struct {
		name  string
		items []v1alpha1.ItemStatus
		want  []RunTime
	}{{
		name:  "no item kept a run: every item takes the default",
		items: []v1alpha1.ItemStatus{kept("a"), kept("b")},
		want:  []RunTime{{Item: "a", Run: 3 * time.Minute, Basis: BasisDefault}, {Item: "b", Run: 3 * time.Minute, Basis: BasisDefault}},
	}, {
		name:  "an item that kept none takes the median of the group's runs pooled, one that kept some its own longest",
		items: []v1alpha1.ItemStatus{kept("a", 60, 300), kept("b", 120), kept("c")},
		want: []RunTime{{Item: "a", Run: 5 * time.Minute, Basis: BasisLongest}, {Item: "b", Run: 2 * time.Minute, Basis: BasisLongest},
			{Item: "c", Run: 2 * time.Minute, Basis: BasisGroupMedian}},
	}, {
		name:  "an even count of runs: the mean of the two middle ones",
		items: []v1alpha1.ItemStatus{kept("a"), kept("b", 15, 600), kept("c", 40, 20)},
		want: []RunTime{{Item: "a", Run: 30 * time.Second, Basis: BasisGroupMedian}, {Item: "b", Run: 10 * time.Minute, Basis: BasisLongest},
			{Item: "c", Run: 40 * time.Second, Basis: BasisLongest}},
	}, {
		name:  "a median of half a second",
		items: []v1alpha1.ItemStatus{kept("a", 1, 2), kept("b")},
		want:  []RunTime{{Item: "a", Run: 2 * time.Second, Basis: BasisLongest}, {Item: "b", Run: 1500 * time.Millisecond, Basis: BasisGroupMedian}},
	}, {
		name:  "runs of no second: at least a second, kept or assumed",
		items: []v1alpha1.ItemStatus{kept("a", 0, 0), kept("b")},
		want:  []RunTime{{Item: "a", Run: time.Second, Basis: BasisLongest}, {Item: "b", Run: time.Second, Basis: BasisGroupMedian}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			assumed := assumeRuns(tc.items, 3*time.Minute)
			got := make([]RunTime, 0, len(tc.items))
			for _, it := range tc.items {
				got = append(got, assumed.of(it))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("run times (-want +got):\n%s", diff)
			}
		})
	}
}
