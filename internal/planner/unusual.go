package planner

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/message"
	"github.com/oaat-io/oaat-operator/internal/runstats"
)

// unusualRuns are the reasons and words of the verdicts on a run's duration, one row per
// runstats.Kind (exhaustive checks that each has one); Usual has no event.
var unusualRuns = map[runstats.Kind]struct {
	reason v1alpha1.Reason
	word   string
}{
	runstats.Usual: {},
	runstats.Short: {v1alpha1.ReasonRunUnusuallyShort, "short"},
	runstats.Long:  {v1alpha1.ReasonRunUnusuallyLong, "long"},
}

// announceUnusualRun sends the Warning event of a run whose duration, just kept in the item's
// recentRunSeconds, is unusual against the runs the item kept before it. The outcome stands.
func (d *decision) announceUnusualRun(it *v1alpha1.ItemStatus, result v1alpha1.RunResult) {
	v := runstats.Newest(it.RecentRunSeconds)
	row := unusualRuns[v.Kind]
	if row.reason == "" {
		return
	}
	d.event(corev1.EventTypeWarning, row.reason, fmt.Sprintf(
		"Item %q ran %ds (%s), %s times the median %ss of its %d runs before: unusually %s; the outcome stands",
		it.Name, v.Seconds, result, ratioText(v.Ratio()), strconv.FormatFloat(v.Median, 'f', -1, 64), v.Before, row.word))
}

// setUnusualRunsCondition lists the items whose newest kept run is unusual (condition
// UnusualRuns), absent until one first is; each unusual run has had its own event.
func (d *decision) setUnusualRunsCondition() {
	var unusual []string
	for i := range d.plan.Status.Items {
		it := &d.plan.Status.Items[i]
		v := runstats.Newest(it.RecentRunSeconds)
		if row := unusualRuns[v.Kind]; row.reason != "" {
			unusual = append(unusual, fmt.Sprintf("%q %s (%ds, %s times the median)", it.Name, row.word, v.Seconds, ratioText(v.Ratio())))
		}
	}
	if len(unusual) > 0 {
		d.setCondition(v1alpha1.ConditionUnusualRuns, metav1.ConditionTrue, v1alpha1.ReasonRunsUnusual,
			fmt.Sprintf("The newest run of %d items was unusually short or long: %s", len(unusual), message.ListFirst(unusual, maxNamedItems, ", ")))
		return
	}
	if meta.FindStatusCondition(d.plan.Status.Conditions, v1alpha1.ConditionUnusualRuns) != nil {
		d.setCondition(v1alpha1.ConditionUnusualRuns, metav1.ConditionFalse, v1alpha1.ReasonRunsUsual,
			"No item's newest run is unusually short or long")
	}
}

// ratioText is a ratio with two significant digits, in whole numbers from 10 on.
func ratioText(r float64) string {
	if r >= 10 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 2, 64)
}
