package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var atRiskDesc = prometheus.NewDesc("oaat_group_at_risk",
	"1 while the group's forecast predicts a missed deadline (condition AtRisk True: an item succeeding only after it goes overdue, a round ending after the next tick or waiting for a blackout window), else 0; absent before the operator has made a forecast of the group.",
	[]string{"namespace", "group", "reason"}, nil)

// collectForecast sends the group's AtRisk condition as a gauge, labelled with its reason.
func collectForecast(ch chan<- prometheus.Metric, g *v1alpha1.OaatGroup) {
	c := meta.FindStatusCondition(g.Status.Conditions, v1alpha1.ConditionAtRisk)
	if c == nil || c.Status == metav1.ConditionUnknown {
		return
	}
	atRisk := 0.0
	if c.Status == metav1.ConditionTrue {
		atRisk = 1
	}
	ch <- prometheus.MustNewConstMetric(atRiskDesc, prometheus.GaugeValue, atRisk, g.Namespace, g.Name, c.Reason)
}
