package integration

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// expectRejected creates obj and expects the API server to refuse it as Invalid, with message.
func expectRejected(ctx context.Context, obj client.Object, message string) {
	GinkgoHelper()
	err := k8sClient.Create(ctx, obj)
	Expect(err).To(HaveOccurred(), "the API server accepted an invalid %T", obj)
	GinkgoWriter.Printf("Rejected: %v\n", err)
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "not an Invalid error: %v", err)
	Expect(err.Error()).To(ContainSubstring(message))
}

var _ = Describe("Admission of OaatGroups and OaatTypes", func() {
	DescribeTable("rejects an invalid OaatGroup with a clear message",
		func(ctx SpecContext, mutate func(*v1alpha1.OaatGroup), message string) {
			group := newGroup("invalid", "a")
			mutate(group)
			expectRejected(ctx, group, message)
		},
		Entry("a frequency with an unknown unit", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.Frequency = "5x" }, `"5x" is not a valid duration`),
		Entry("a zero frequency", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.Frequency = "0s" }, `"0s" is zero`),
		Entry("a failure cool-off in milliseconds", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.FailureCoolOff = "1ms" }, `"1ms" is not a valid duration`),
		Entry("duplicate items", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = []string{"a", "b", "a"} }, `spec.oaatItems[2]: Duplicate value: "a"`),
		Entry("no items", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = []string{} }, "spec.oaatItems or spec.oaatItemsFrom must give the group at least one item"),
		Entry("an item source naming an invalid ConfigMap", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "Not_A_Name"}}}
			}, `spec.oaatItemsFrom[0].configMap.name: Invalid value: "Not_A_Name"`),
		Entry("an item source with two members", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{
					ConfigMap:              &v1alpha1.ConfigMapItems{Name: "dirs"},
					PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{Selector: &metav1.LabelSelector{}},
				}}
			}, "spec.oaatItemsFrom[0]: Invalid value: exactly one of the fields in [configMap persistentVolumeClaims] must be set"),
		Entry("an item source with no member", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{}} },
			"spec.oaatItemsFrom[0]: Invalid value: exactly one of the fields in [configMap persistentVolumeClaims] must be set"),
		Entry("a PersistentVolumeClaims source without a selector", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{PersistentVolumeClaims: &v1alpha1.PersistentVolumeClaimItems{}}}
			}, "spec.oaatItemsFrom[0].persistentVolumeClaims.selector: Required value"),
		Entry("a pending timeout that is no duration", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.PendingTimeout = "soon" }, `"soon" is not a valid duration`),
		Entry("an empty item", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = []string{"a", ""} }, "spec.oaatItems[1] in body should be at least 1 chars long"),
		Entry("an item of 254 characters", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = []string{strings.Repeat("x", 254)} }, "spec.oaatItems[0]: Too long: may not be more than 253"),
		Entry("a name longer than 63 characters", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Name = strings.Repeat("g", 64) }, "metadata.name must be at most 63 characters"),
		Entry("a blackout window at 24:00", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "22:00", End: "24:00"}}
			}, `spec.blackoutWindows[0].end: Invalid value: "24:00"`),
		Entry("an empty blackout window", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "02:00", End: "02:00"}}
			}, "a blackout window from 02:00 to 02:00 is empty"),
		Entry("a blackout window on an unknown day", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: "02:00", End: "03:00", Days: []v1alpha1.Weekday{"Monday"}}}
			}, `spec.blackoutWindows[0].days[0]: Unsupported value: "Monday"`),
		Entry("exponential backoff without a failure cool-off", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential} },
			"backoff.policy Exponential needs failureCoolOff"),
		Entry("a maximum cool-off below the failure cool-off", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.FailureCoolOff = "1 hour 30 min"
				g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential, MaxCoolOff: "85m"}
			}, `backoff.maxCoolOff "85m" is shorter than failureCoolOff "1 hour 30 min"`),
		Entry("an exponential backoff whose default maximum (1d) is below the failure cool-off", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.FailureCoolOff = "1d 1s"
				g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential}
			}, `backoff.maxCoolOff "1d" is shorter than failureCoolOff "1d 1s"`),
		Entry("an exit code both success and do-not-retry", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3, 4}, DoNotRetry: []int32{4}}
			}, "an exit code cannot be both in exitCodes.success and in exitCodes.doNotRetry"),
		Entry("an exit code of 256", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{256}} },
			"spec.exitCodes.success[0]: Invalid value: 256"),
		Entry("an unknown mode", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.Mode = "Once" }, `spec.mode: Unsupported value: "Once"`),
		Entry("a zero run timeout", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.RunTimeout = "0m" }, `"0m" is zero`),
		Entry("a negative pod history", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) { g.Spec.PodHistory = &v1alpha1.PodHistory{Failed: ptr.To[int32](-1)} },
			"spec.podHistory.failed: Invalid value: -1"),
		Entry("a circuit breaker that one failed item would open", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 1}
			},
			"spec.circuitBreaker.consecutiveItemFailures: Invalid value: 1"),
		Entry("a circuit breaker's probe interval in milliseconds", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3, ProbeInterval: "500ms"}
			}, `"500ms" is not a valid duration`),
		Entry("a circuit breaker's maximum probe interval below its probe interval", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3, ProbeInterval: "10 min", MaxProbeInterval: "5m"}
			}, `circuitBreaker.maxProbeInterval "5m" is shorter than probeInterval "10 min"`),
		Entry("a circuit breaker's probe interval above the default maximum (1h)", SpecTimeout(specTimeout),
			func(g *v1alpha1.OaatGroup) {
				g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3, ProbeInterval: "2h"}
			}, `circuitBreaker.maxProbeInterval "1h" is shorter than probeInterval "2h"`),
	)

	It("turns an empty circuit breaker on with its defaults", func(ctx SpecContext) {
		group := newGroup("breaker-defaults", "a")
		group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{}
		Expect(k8sClient.Create(ctx, group)).To(Succeed())
		Expect(group.Spec.CircuitBreaker).To(Equal(&v1alpha1.CircuitBreaker{ConsecutiveItemFailures: v1alpha1.DefaultConsecutiveItemFailures}))
	}, SpecTimeout(specTimeout))

	It("accepts a circuit breaker whose maximum probe interval is equal to or above its probe interval, in any spelling", func(ctx SpecContext) {
		for i, pair := range [][2]v1alpha1.Duration{{"60m", "1 hour"}, {"", "1m"}, {"30s", ""}, {"1d", "1w"}} {
			group := newGroup(fmt.Sprintf("breaker-%d", i), "a")
			group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 2, ProbeInterval: pair[0], MaxProbeInterval: pair[1]}
			Expect(k8sClient.Create(ctx, group)).To(Succeed(), "probeInterval %q, maxProbeInterval %q", pair[0], pair[1])
		}
	}, SpecTimeout(specTimeout))

	It("accepts a maximum cool-off equal to or above the failure cool-off, in any spelling", func(ctx SpecContext) {
		for i, pair := range [][2]v1alpha1.Duration{{"90m", "1h 30 min"}, {"2 weeks", "14d"}, {"30s", "1w"}} {
			group := newGroup(fmt.Sprintf("backoff-%d", i), "a")
			group.Spec.FailureCoolOff = pair[0]
			group.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential, MaxCoolOff: pair[1]}
			Expect(k8sClient.Create(ctx, group)).To(Succeed(), "failureCoolOff %q, maxCoolOff %q", pair[0], pair[1])
		}
	}, SpecTimeout(specTimeout))

	It("defaults the scheduling controls", func(ctx SpecContext) {
		group := newGroup("defaults", "a")
		group.Spec.Backoff = &v1alpha1.Backoff{}
		group.Spec.PodHistory = &v1alpha1.PodHistory{}
		Expect(k8sClient.Create(ctx, group)).To(Succeed())
		stored := getGroup(ctx, Default, "defaults")
		Expect(stored.Spec.Mode).To(Equal(v1alpha1.ModeContinuous))
		Expect(stored.Spec.Backoff.Policy).To(Equal(v1alpha1.BackoffFixed))
		Expect(stored.Spec.PodHistory.Succeeded).To(HaveValue(BeEquivalentTo(1)))
		Expect(stored.Spec.PodHistory.Failed).To(HaveValue(BeEquivalentTo(1)))
	}, SpecTimeout(specTimeout))

	It("rejects an OaatType whose pods would restart their containers", func(ctx SpecContext) {
		ot := newOaatType("restarting")
		ot.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		expectRejected(ctx, ot, "restartPolicy must be Never")
	}, SpecTimeout(specTimeout))

	DescribeTable("accepts durations in the original syntax",
		func(ctx SpecContext, frequency v1alpha1.Duration) {
			group := newGroup("valid", "a")
			group.Spec.Frequency = frequency
			group.Spec.FailureCoolOff = frequency
			Expect(k8sClient.Create(ctx, group)).To(Succeed())
			stored := getGroup(ctx, Default, "valid")
			Expect(stored.Spec.Frequency).To(Equal(frequency))
			Expect(stored.Spec.FailureCoolOff).To(Equal(frequency))
		},
		Entry(nil, SpecTimeout(specTimeout), v1alpha1.Duration("1h30m")),
		Entry(nil, SpecTimeout(specTimeout), v1alpha1.Duration("1 hour 30 min")),
		Entry(nil, SpecTimeout(specTimeout), v1alpha1.Duration("65m1h")),
	)
})
