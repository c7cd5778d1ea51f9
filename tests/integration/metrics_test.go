package integration

import (
	"context"
	"fmt"
	"maps"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("Metrics", func() {
	It("observes each finished run once and exports the status as gauges", func(ctx SpecContext) {
		group := map[string]string{"namespace": ns, "group": "measured"}
		item := map[string]string{"namespace": ns, "group": "measured", "item": "a"}
		failed := withLabels(item, "result", "failed")
		succeeded := withLabels(item, "result", "succeeded")
		g := newGroup("measured", "a")
		g.Spec.FailureCoolOff = "2s"
		create(ctx, newOaatType(typeName), g)

		first := waitForLivePod(ctx, "measured")
		markRunning(ctx, first.Name)
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_group_running", group)).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_item_running_seconds", item)).To(BeNumerically(">=", 0))
		}).WithContext(ctx).Should(Succeed())

		By("failing the first run")
		time.Sleep(time.Second) // a run of at least a second, so that its duration is not zero
		failedAt := finishPod(ctx, first.Name, 3, "Error")
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_item_runs_total", failed)).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_item_failures_since_success", item)).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_item_last_failure_timestamp_seconds", item)).To(Equal(float64(failedAt.Unix())))
		}).WithContext(ctx).Should(Succeed())
		started := podStartTime(ctx, first.Name)
		Expect(histogram(Default, "oaat_item_run_duration_seconds", failed)).To(And(
			HaveField("GetSampleCount()", uint64(1)),
			HaveField("GetSampleSum()", failedAt.Sub(started).Seconds()),
		))

		By("succeeding on the retry after the cool-off")
		second := waitForLivePod(ctx, "measured", first.Name)
		markRunning(ctx, second.Name)
		succeededAt := finishPod(ctx, second.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			g.Expect(metricValue(g, "oaat_item_runs_total", succeeded)).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_item_runs_total", failed)).To(Equal(1.0))
			g.Expect(metricValue(g, "oaat_item_failures_since_success", item)).To(Equal(0.0))
			g.Expect(metricValue(g, "oaat_item_last_success_timestamp_seconds", item)).To(Equal(float64(succeededAt.Unix())))
			g.Expect(metricValue(g, "oaat_item_overdue_seconds", item)).To(Equal(0.0))
			g.Expect(metricValue(g, "oaat_group_frequency_seconds", group)).To(Equal(3600.0))
			g.Expect(metricValue(g, "oaat_group_running", group)).To(Equal(0.0))
			g.Expect(hasSeries("oaat_item_running_seconds", item)).To(BeFalse())
		}).WithContext(ctx).Should(Succeed())

		By("dropping every series of a deleted group")
		Expect(k8sClient.Delete(ctx, g)).To(Succeed())
		Eventually(func() bool { return hasSeries("oaat_group_running", group) }).WithContext(ctx).Should(BeFalse())
		Expect(hasSeries("oaat_item_failures_since_success", item)).To(BeFalse())
		Eventually(func() bool {
			return hasSeries("oaat_item_runs_total", item) || hasSeries("oaat_item_run_duration_seconds", item)
		}).WithContext(ctx).Should(BeFalse())
	}, SpecTimeout(specTimeout))
})

// podStartTime reads the start time the pod's status reports.
func podStartTime(ctx context.Context, name string) time.Time {
	pod := &corev1.Pod{}
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
	ExpectWithOffset(1, pod.Status.StartTime).NotTo(BeNil())
	return pod.Status.StartTime.Time
}

func withLabels(base map[string]string, kv ...string) map[string]string {
	labels := maps.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		labels[kv[i]] = kv[i+1]
	}
	return labels
}

// series returns the series of the named metric whose labels include labels.
func series(name string, labels map[string]string) ([]*dto.Metric, error) {
	families, err := registry.Gather()
	if err != nil {
		return nil, err
	}
	var found []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				found = append(found, m)
			}
		}
	}
	return found, nil
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	matched := 0
	for _, lp := range m.GetLabel() {
		if want, ok := labels[lp.GetName()]; ok {
			if lp.GetValue() != want {
				return false
			}
			matched++
		}
	}
	return matched == len(labels)
}

func hasSeries(name string, labels map[string]string) bool {
	found, err := series(name, labels)
	Expect(err).NotTo(HaveOccurred())
	return len(found) > 0
}

// metricValue is the value of the one series of a counter or gauge with those labels.
func metricValue(g Gomega, name string, labels map[string]string) float64 {
	found, err := series(name, labels)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	g.ExpectWithOffset(1, found).To(HaveLen(1), "series of %s with %v", name, labels)
	m := found[0]
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	g.ExpectWithOffset(1, fmt.Sprintf("%s is a counter or gauge", name)).To(BeEmpty())
	return 0
}

func histogram(g Gomega, name string, labels map[string]string) *dto.Histogram {
	found, err := series(name, labels)
	g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
	g.ExpectWithOffset(1, found).To(HaveLen(1), "series of %s with %v", name, labels)
	return found[0].GetHistogram()
}
