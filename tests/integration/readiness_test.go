package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

var _ = Describe("Readiness of a group", func() {
	It("waits for its OaatType when created before it, then starts", func(ctx SpecContext) {
		create(ctx, newGroup("early", "a"))

		By("reporting the missing OaatType")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "early")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonOaatTypeNotFound)
			expectCondition(g, group, v1alpha1.ConditionRunning, metav1.ConditionFalse, v1alpha1.ReasonIdle)
			g.Expect(group.Status.CurrentRun).To(BeNil())
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "early", corev1.EventTypeWarning, v1alpha1.ReasonOaatTypeNotFound)
		expectNoLivePod(ctx, "early", time.Second)

		By("starting once the OaatType exists")
		create(ctx, newOaatType(typeName))
		pod := waitForLivePod(ctx, "early")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "early")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", pod.Name))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("reports a pod the API server refuses and recovers by itself once the OaatType is fixed", func(ctx SpecContext) {
		broken := newOaatType(typeName)
		broken.Spec.Template.Spec.Containers[0].Name = "Bad_Name" // not a DNS label: only pod validation says so
		create(ctx, broken, newGroup("refused", "a"))

		By("reporting the refusal")
		var failedAt metav1.Time
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "refused")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonPodCreateFailed)
			g.Expect(condition(group, v1alpha1.ConditionReady).Message).To(ContainSubstring("Bad_Name"))
			expectCondition(g, group, v1alpha1.ConditionRunning, metav1.ConditionFalse, v1alpha1.ReasonIdle)
			g.Expect(group.Status.CurrentRun).To(BeNil())
			failedAt = condition(group, v1alpha1.ConditionReady).LastTransitionTime
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "refused", corev1.EventTypeWarning, v1alpha1.ReasonPodCreateFailed)
		pods, err := podsOf(ctx, "refused")
		Expect(err).NotTo(HaveOccurred())
		Expect(pods).To(BeEmpty())

		By("fixing the OaatType")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ot := &v1alpha1.OaatType{}
			if err := k8sClient.Get(ctx, keyOf(broken), ot); err != nil {
				return err
			}
			ot.Spec.Template.Spec.Containers[0].Name = mainContainer
			return k8sClient.Update(ctx, ot)
		})).To(Succeed())

		By("starting the item after the retry wait, without any other change")
		pod := waitForLivePodWithin(ctx, planner.MinRetry+10*time.Second, "refused")
		Expect(pod.Spec.Containers[0].Name).To(Equal(mainContainer))
		Expect(pod.CreationTimestamp.Time).NotTo(BeTemporally("<", failedAt.Add(planner.MinRetry)),
			"the retry came before the backoff of %v after the failure at %s", planner.MinRetry, failedAt.Format(time.RFC3339))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "refused")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			g.Expect(group.Status.CurrentRun).To(HaveField("PodName", pod.Name))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("refuses a frequency too large for a time.Duration at admission", func(ctx SpecContext) {
		// The planner's InvalidSpec for such a frequency (an object stored before the rule) is
		// covered by its unit tests: the API server no longer stores one.
		group := newGroup("eternal", "a")
		group.Spec.Frequency = "99999 weeks" // about 1900 years: more than a time.Duration holds
		expectRejected(ctx, group, `"99999 weeks" is too long: a duration is at most 9223372036s`)
	}, SpecTimeout(specTimeout))
})
