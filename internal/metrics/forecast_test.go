package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestCollectForecast(t *testing.T) {
	withCondition := func(name string, status metav1.ConditionStatus, reason v1alpha1.Reason) *v1alpha1.OaatGroup {
		return builders.Group().Named(name).Condition(metav1.Condition{Type: v1alpha1.ConditionAtRisk, Status: status, Reason: string(reason)}).Obj()
	}
	never := builders.Group().Named("never").Obj()
	want := `
# HELP oaat_group_at_risk 1 while the group's forecast predicts a missed deadline (condition AtRisk True: an item succeeding only after it goes overdue, a round ending after the next tick or waiting for a blackout window), else 0; absent before the operator has made a forecast of the group.
# TYPE oaat_group_at_risk gauge
oaat_group_at_risk{group="late",namespace="ns",reason="ItemLate"} 1
oaat_group_at_risk{group="ontime",namespace="ns",reason="OnTime"} 0
`
	got := groups{
		withCondition("late", metav1.ConditionTrue, v1alpha1.ReasonItemLate),
		withCondition("ontime", metav1.ConditionFalse, v1alpha1.ReasonOnTime),
		withCondition("unknown", metav1.ConditionUnknown, "Unknown"),
		never,
	}
	if err := testutil.CollectAndCompare(got, strings.NewReader(want), "oaat_group_at_risk"); err != nil {
		t.Fatal(err)
	}
}
