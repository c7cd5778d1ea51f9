//go:build e2e

package e2e

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var _ = Describe("A pod the API server refuses", func() {
	// The API server may refuse an item pod (a quota, an admission policy). Here a
	// ValidatingAdmissionPolicy refuses the pod of the group's second run only, so that the
	// reconcile that records the first run's outcome is also the one whose pod creation fails.
	It("does not lose the outcome event of the run that ended just before", func(ctx SpecContext) {
		refuseRunInNamespace(ctx, "2")
		create(ctx, newOaatType("quick", "2s", 0), newGroup("refused", "quick", "a", "b"))

		By("waiting for the first run to be recorded and the second run's pod to be refused")
		var firstPod string
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "refused")
			var succeeded []string
			for _, it := range group.Status.Items {
				if it.LastSuccess != nil {
					succeeded = append(succeeded, it.LastPodName)
				}
			}
			g.Expect(succeeded).NotTo(BeEmpty(), "no item has succeeded yet")
			firstPod = succeeded[0]
			g.Expect(groupEvents(ctx, g, "refused", v1alpha1.ReasonPodCreateFailed)).NotTo(BeEmpty(),
				"the second run's pod was not refused")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		By("waiting for a later attempt to run the other item")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "refused")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			for _, item := range []string{"a", "b"} {
				it := itemStatus(group, item)
				g.Expect(it).NotTo(BeNil())
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s has not succeeded", item)
			}
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
		}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())

		By("checking that each run's outcome was announced once")
		Eventually(func(g Gomega) {
			succeeded, failed := outcomeRecords(ctx, g, "refused", firstPod)
			g.Expect(succeeded).To(Equal(1), "RunSucceeded events for pod %s of the first run: its outcome is in "+
				"status, but its event was dropped when the next pod was refused", firstPod)
			g.Expect(failed).To(BeZero())
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	}, SpecTimeout(2*time.Minute))
})

// refusingPolicyPrefix starts the names of the admission policies that refuse pods on purpose.
const refusingPolicyPrefix = "e2e-refuse-run-"

// refuseRunInNamespace makes the API server refuse, in the test's namespace, every pod whose
// oaat.io/run label is run; it waits until the policy is in force and removes it after the test.
func refuseRunInNamespace(ctx SpecContext, run string) {
	GinkgoHelper()
	name := refusingPolicyPrefix + run + "-" + ns
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!(has(object.metadata.labels) && '" + v1alpha1.LabelRun + "' in object.metadata.labels && " +
					"object.metadata.labels['" + v1alpha1.LabelRun + "'] == '" + run + "')",
				Message: "e2e test: the pod of run " + run + " is refused",
				Reason:  ptr.To(metav1.StatusReasonInvalid),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			},
		},
	}
	create(ctx, policy, binding)
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, binding))).To(Succeed())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, policy))).To(Succeed())
	})
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: ns, Labels: map[string]string{v1alpha1.LabelRun: run}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.invalid/probe:latest"}}},
	}
	Eventually(func() error {
		return k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(MatchError(ContainSubstring("e2e test: the pod of run")),
		"the admission policy is not in force")
}
