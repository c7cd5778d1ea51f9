package integration

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// labelTeam is the namespace label the ClusterOaatLocks of these tests select.
const labelTeam = "integration.oaat.io/team"

// newClusterLock makes a ClusterOaatLock selecting the namespaces labelled team=backup, named
// after the test's namespace (cluster-scoped objects outlive a test's namespace), and deletes it
// when the test ends.
func newClusterLock(ctx context.Context, capacity int32) *v1alpha1.ClusterOaatLock {
	GinkgoHelper()
	lock := support.ClusterLock(ns+"-db", capacity, map[string]string{labelTeam: "backup"})
	create(ctx, lock)
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, lock))).To(Succeed())
	})
	return lock
}

func getClusterLock(ctx context.Context, g Gomega, name string) *v1alpha1.ClusterOaatLock {
	lock := &v1alpha1.ClusterOaatLock{}
	g.ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Name: name}, lock)).To(Succeed())
	return lock
}

// labelNamespace sets (or, with an empty value, removes) the team label of a namespace.
func labelNamespace(ctx context.Context, name, team string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		namespace := &corev1.Namespace{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, namespace); err != nil {
			return err
		}
		if namespace.Labels == nil {
			namespace.Labels = map[string]string{}
		}
		namespace.Labels[labelTeam] = team
		if team == "" {
			delete(namespace.Labels, labelTeam)
		}
		return k8sClient.Update(ctx, namespace)
	})).To(Succeed())
}

// sharingNamespace creates a further namespace for the test, labelled with team unless empty, and
// deletes its groups and pods when the test ends (no namespace controller runs).
func sharingNamespace(ctx context.Context, team string) string {
	GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "oaat-it-other-"}}
	if team != "" {
		namespace.Labels = map[string]string{labelTeam: team}
	}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(namespace.Name))).To(Succeed())
		Expect(k8sClient.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(namespace.Name),
			client.GracePeriodSeconds(0))).To(Succeed())
	})
	return namespace.Name
}

// inNamespace runs f with the helpers of the suite working in another namespace.
func inNamespace(namespace string, f func()) {
	saved := ns
	ns = namespace
	defer func() { ns = saved }()
	f()
}

// clusterLockedGroup is a group named backups, in the namespace, of the items, naming the
// ClusterOaatLock; its OaatType is created with it.
func clusterLockedGroup(ctx context.Context, namespace, lock string, items ...string) {
	GinkgoHelper()
	inNamespace(namespace, func() {
		create(ctx, newOaatType(typeName), support.Group(ns, "backups", typeName, items...).ClusterLocks(lock).Obj())
	})
}

// liveIn lists the live pods of the group backups in each namespace, in all.
func liveIn(ctx context.Context, g Gomega, namespaces ...string) []corev1.Pod {
	var live []corev1.Pod
	for _, namespace := range namespaces {
		inNamespace(namespace, func() {
			pods, err := livePodsOf(ctx, "backups")
			g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
			live = append(live, pods...)
		})
	}
	return live
}

var _ = Describe("ClusterOaatLocks", func() {
	It("never runs two pods of same-named groups of two namespaces sharing a ClusterOaatLock of capacity 1", func(ctx SpecContext) {
		labelNamespace(ctx, ns, "backup")
		second := sharingNamespace(ctx, "backup")
		namespaces := []string{ns, second}
		lock := newClusterLock(ctx, 1)
		tracker := support.NewClusterLockTracker(lock.Name, []support.GroupKey{
			{Namespace: ns, Group: "backups"}, {Namespace: second, Group: "backups"}}, labelTestPod)
		watch, err := support.WatchPods(ctx, clientset, "", tracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(watch.Stop()).To(Succeed(), "the watch of the cluster lock did not see every pod event")
		})
		for _, namespace := range namespaces {
			clusterLockedGroup(ctx, namespace, lock.Name, "a", "b")
		}

		ran := map[string]int{}
		for range 4 {
			var pod corev1.Pod
			Eventually(func(g Gomega) {
				live := liveIn(ctx, g, namespaces...)
				g.Expect(podNames(live)).To(HaveLen(1))
				pod = live[0]
			}).WithContext(ctx).Should(Succeed())
			ran[pod.Namespace]++
			By("recording the holder, with its namespace, before the pod; the other namespace's group waits")
			Eventually(func(g Gomega) {
				l := getClusterLock(ctx, g, lock.Name)
				g.Expect(l.Status.Holders).To(HaveLen(1))
				g.Expect(l.Status.Holders[0].Namespace).To(Equal(pod.Namespace))
				g.Expect(l.Status.Holders[0].Group).To(Equal("backups"))
				g.Expect(l.Status.Holders[0].Pod).To(Equal(pod.Name))
				g.Expect(l.Status.HolderCount).To(Equal(int32(1)))
			}).WithContext(ctx).Should(Succeed())
			Consistently(func(g Gomega) {
				g.Expect(podNames(liveIn(ctx, g, namespaces...))).To(HaveLen(1))
			}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())
			inNamespace(pod.Namespace, func() {
				markRunning(ctx, pod.Name)
				finishPod(ctx, pod.Name, 0, "Completed")
			})
		}
		Expect(ran).To(Equal(map[string]int{ns: 2, second: 2}), "runs per namespace")
		Eventually(func(g Gomega) {
			l := getClusterLock(ctx, g, lock.Name)
			g.Expect(l.Status.Holders).To(BeEmpty())
			g.Expect(l.Status.WaitingGroups).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
		Expect(tracker.MaxLive("", lock.Name)).To(Equal(1), "pods of the groups sharing the lock:\n%s", tracker.Describe(""))
	})

	It("keeps a group of a namespace the lock does not select not Ready, and runs it once the namespace is labelled", func(ctx SpecContext) {
		lock := newClusterLock(ctx, 1)
		clusterLockedGroup(ctx, ns, lock.Name, "a")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "backups")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonLockNotPermitted)
			g.Expect(condition(group, v1alpha1.ConditionReady).Message).To(ContainSubstring("ClusterOaatLock " + lock.Name))
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "backups", corev1.EventTypeWarning, v1alpha1.ReasonLockNotPermitted)
		expectNoLivePod(ctx, "backups", 2*time.Second)
		Expect(getClusterLock(ctx, Default, lock.Name).Status.Holders).To(BeEmpty())

		By("labelling the namespace: the group becomes Ready and runs, without a change of its own")
		labelNamespace(ctx, ns, "backup")
		pod := waitForLivePod(ctx, "backups")
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, "backups"), v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			g.Expect(getClusterLock(ctx, g, lock.Name).Status.Holders).To(ConsistOf(
				HaveField("Pod", pod.Name)))
		}).WithContext(ctx).Should(Succeed())
		finishPod(ctx, pod.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			g.Expect(getClusterLock(ctx, g, lock.Name).Status.Holders).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Admission of ClusterOaatLocks and spec.clusterLocks", func() {
	It("rejects more than four locks of both kinds together, keeps namespaced lists valid", func(ctx SpecContext) {
		mixed := support.Group(ns, "mixed", typeName, "x").Locks("a", "b", "c").ClusterLocks("d", "e").Obj()
		expectRejected(ctx, mixed, "spec.locks and spec.clusterLocks name at most four locks in all")
		bad := support.Group(ns, "badname", typeName, "x").ClusterLocks("Not_A_Name").Obj()
		expectRejected(ctx, bad, `spec.clusterLocks[0]: Invalid value: "Not_A_Name"`)
		four := support.Group(ns, "four", typeName, "x").Locks("a", "b").ClusterLocks("c", "d").Obj()
		Expect(k8sClient.Create(ctx, four)).To(Succeed())
	}, SpecTimeout(specTimeout))

	It("rejects a capacity below 1 and a selector operator Kubernetes does not know, and defaults capacity to 1", func(ctx SpecContext) {
		zero := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": v1alpha1.KindClusterOaatLock,
			"metadata": map[string]any{"name": ns + "-zero"},
			"spec":     map[string]any{"capacity": int64(0)},
		}}
		expectRejected(ctx, zero, "spec.capacity: Invalid value: 0")
		badOp := support.ClusterLock(ns+"-near", 0, nil)
		badOp.Spec.NamespaceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelTeam, Operator: "Near", Values: []string{"x"}}}
		expectRejected(ctx, badOp, "operator must be one of In, NotIn, Exists, DoesNotExist")
		noValues := support.ClusterLock(ns+"-novalues", 0, nil)
		noValues.Spec.NamespaceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelTeam, Operator: metav1.LabelSelectorOpIn}}
		expectRejected(ctx, noValues, "In and NotIn need values")
		lock := newClusterLock(ctx, 0)
		Expect(getClusterLock(ctx, Default, lock.Name).Spec.Capacity).To(Equal(int32(1)))
	}, SpecTimeout(specTimeout))
})
