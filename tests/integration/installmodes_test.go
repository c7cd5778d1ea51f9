package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// The install modes of the bundle: AllNamespaces is what every other test runs; these run the
// manager as OLM does for the others, with WATCH_NAMESPACE set to the target namespaces.
var _ = Describe("Watching only some namespaces", func() {
	It("runs the groups of its namespace and leaves those of others alone (OwnNamespace, SingleNamespace)", func(ctx SpecContext) {
		other := otherNamespace(ctx)
		stopManager()
		stopManager = startManager(ns)

		createGroupIn(ctx, ns, "watched")
		createGroupIn(ctx, other, "ignored")
		waitForLivePod(ctx, "watched")
		Consistently(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(other))).To(Succeed())
			g.Expect(pods.Items).To(BeEmpty())
			group := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: other, Name: "ignored"}, group)).To(Succeed())
			g.Expect(group.Status.Conditions).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("runs the groups of each of its namespaces (MultiNamespace)", func(ctx SpecContext) {
		other := otherNamespace(ctx)
		stopManager()
		stopManager = startManager(ns, other)

		createGroupIn(ctx, ns, "first")
		createGroupIn(ctx, other, "second")
		waitForLivePod(ctx, "first")
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(other),
				client.MatchingLabels{v1alpha1.LabelGroup: "second"})).To(Succeed())
			g.Expect(pods.Items).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))
})

// otherNamespace creates a second namespace for the test, emptied when the test ends.
func otherNamespace(ctx context.Context) string {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "oaat-it-other-"}}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(namespace.Name))).To(Succeed())
		Expect(k8sClient.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace.Name),
			client.GracePeriodSeconds(0))).To(Succeed())
	})
	return namespace.Name
}

// createGroupIn creates the test's OaatType and a one-item group in namespace.
func createGroupIn(ctx context.Context, namespace, name string) {
	ot := newOaatType(typeName)
	ot.Namespace = namespace
	group := newGroup(name, "a")
	group.Namespace = namespace
	if err := client.IgnoreAlreadyExists(k8sClient.Create(ctx, ot)); err != nil {
		Fail(err.Error())
	}
	Expect(k8sClient.Create(ctx, group)).To(Succeed())
}
