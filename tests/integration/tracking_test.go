package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("Disruptions no reconcile saw (the finalizer oaat.io/run-tracking)", func() {
	DescribeTable("records a run whose pod was disrupted while the operator was stopped as interrupted, and runs its item again",
		func(ctx SpecContext, disrupt func(ctx context.Context, pod *corev1.Pod)) {
			items := [2]string{"a", "b"}
			group := newGroup("drained", items[:]...)
			group.Spec.FailureCoolOff = "1h"
			create(ctx, newOaatType(typeName), group)
			pod := waitForLivePod(ctx, "drained")
			item := pod.Annotations[v1alpha1.AnnotationItem]
			Expect(pod.Finalizers).To(ContainElement(v1alpha1.FinalizerRunTracking), "the pod is created with it")
			markRunning(ctx, pod.Name)
			Eventually(func(g Gomega) {
				g.Expect(getGroup(ctx, g, "drained").Status.CurrentRun).To(HaveField("PodName", pod.Name))
			}).WithContext(ctx).Should(Succeed())

			By("stopping the operator, then disrupting the pod")
			stopManager()
			disrupt(ctx, pod)
			Consistently(func(g Gomega) {
				kept := &corev1.Pod{}
				g.Expect(k8sClient.Get(ctx, keyOf(pod), kept)).To(Succeed(), "the finalizer keeps the pod until its run is recorded")
				g.Expect(kept.DeletionTimestamp).NotTo(BeNil())
			}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

			By("starting the operator: it records an interruption and releases the pod")
			stopManager = startManager()
			interrupted := func(g Gomega) {
				group := getGroup(ctx, g, "drained")
				it := itemStatus(group, item)
				g.Expect(it).NotTo(BeNil())
				g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDisrupted)))
				g.Expect(it.FailureCount).To(BeZero())
				g.Expect(it.LastFailure).To(BeNil())
				g.Expect(it.LastPodName).To(Equal(pod.Name))
				g.Expect(occurrences(groupEvents(ctx, g, "drained", v1alpha1.ReasonRunInterrupted))).To(Equal(1))
				g.Expect(groupEvents(ctx, g, "drained", v1alpha1.ReasonRunFailed)).To(BeEmpty())
				err := k8sClient.Get(ctx, keyOf(pod), &corev1.Pod{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the released pod is gone: %v", err)
			}
			Eventually(interrupted).WithContext(ctx).Should(Succeed())
			Consistently(interrupted).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

			By("running the interrupted item again with no cool-off (spec.failureCoolOff is 1h)")
			next := waitForLivePod(ctx, "drained", pod.Name)
			if next.Annotations[v1alpha1.AnnotationItem] != item {
				finishPod(ctx, next.Name, 0, "Completed")
				next = waitForLivePod(ctx, "drained", pod.Name, next.Name)
			}
			Expect(next.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationItem, item))
		},
		Entry("evicted through the Eviction API (a kubectl drain), ended by its kubelet", SpecTimeout(specTimeout), func(ctx context.Context, pod *corev1.Pod) {
			bind(ctx, pod.Name)
			Expect(clientset.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
			})).To(Succeed())
			finishPod(ctx, pod.Name, 143, "Error")
			// The kubelet deletes the pod once its containers stopped; the finalizer keeps it.
			Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		}),
		Entry("evicted through the Eviction API before it was scheduled", SpecTimeout(specTimeout), func(ctx context.Context, pod *corev1.Pod) {
			Expect(clientset.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{
				ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: ns},
			})).To(Succeed())
		}),
		Entry("ended and deleted with DisruptionTarget (a lost node's pod garbage collector)", SpecTimeout(specTimeout), func(ctx context.Context, pod *corev1.Pod) {
			bind(ctx, pod.Name)
			updatePodStatus(ctx, pod.Name, func(pod *corev1.Pod) {
				pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
					Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "DeletionByPodGC",
					LastTransitionTime: metav1.Now(),
				})
			})
			finishPod(ctx, pod.Name, 137, "Error")
			Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		}),
	)

	It("costs one write per run, the removal of the finalizer, measured on the API server", func(ctx SpecContext) {
		const runs = 5
		items := []string{"a", "b", "c", "d", "e"}
		create(ctx, newOaatType(typeName))
		before, err := perfkit.APIRequests(ctx, clientset)
		Expect(err).NotTo(HaveOccurred())
		create(ctx, newGroup("metered", items...))
		var previous []string
		for range runs {
			pod := waitForLivePod(ctx, "metered", previous...)
			finishPod(ctx, pod.Name, 0, "Completed")
			previous = append(previous, pod.Name)
		}
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "metered")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			for _, item := range items {
				g.Expect(itemStatus(group, item).LastSuccess).NotTo(BeNil())
			}
			pods, err := podsOf(ctx, "metered")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(runs))
			for _, pod := range pods {
				g.Expect(pod.Finalizers).NotTo(ContainElement(v1alpha1.FinalizerRunTracking), "pod %s", pod.Name)
			}
		}).WithContext(ctx).Should(Succeed())
		time.Sleep(time.Second) // the last writes settle (an event after the status)
		after, err := perfkit.APIRequests(ctx, clientset)
		Expect(err).NotTo(HaveOccurred())
		writes := operatorWrites(before, after)
		total := 0.0
		for _, n := range writes {
			total += n
		}
		AddReportEntry("operator writes", fmt.Sprintf("%d runs: %v, %.2f per run", runs, writes, total/runs))
		Expect(writes).To(HaveKeyWithValue("pods PATCH", float64(runs)), "one finalizer removal per run")
	}, SpecTimeout(specTimeout))

	It("removes its finalizer only, without a conflict, from pods whose status and finalizers change after it read them", func(ctx SpecContext) {
		const keep = "example.com/keep"
		items := []string{"a", "b", "c", "d", "e"}
		create(ctx, newOaatType(typeName))
		before, err := perfkit.APIRequests(ctx, clientset)
		Expect(err).NotTo(HaveOccurred())
		create(ctx, newGroup("changing", items...))
		var previous []string
		for range items {
			pod := waitForLivePod(ctx, "changing", previous...)
			previous = append(previous, pod.Name)
			setFinalizer(ctx, pod.Name, keep, true)
			DeferCleanup(setFinalizer, pod.Name, keep, false)
			finishPod(ctx, pod.Name, 0, "Completed")
			// A second status write right after the first, as a kubelet (kwok) makes: the
			// operator's removal of its finalizer races it.
			updatePodStatus(ctx, pod.Name, func(pod *corev1.Pod) {
				pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
					Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: metav1.Now(),
				})
			})
		}
		Eventually(func(g Gomega) {
			pods, err := podsOf(ctx, "changing")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods).To(HaveLen(len(items)))
			for _, pod := range pods {
				g.Expect(pod.Finalizers).To(Equal([]string{keep}), "pod %s", pod.Name)
			}
		}).WithContext(ctx).Should(Succeed())
		after, err := perfkit.APIRequests(ctx, clientset)
		Expect(err).NotTo(HaveOccurred())
		failed := after.Since(before).Count(func(k perfkit.RequestKey) bool {
			return k.Failed && k.Resource == "pods" && k.Subresource == "" && k.Verb == "PATCH"
		})
		Expect(failed).To(BeZero(), "failed pod patches")
	}, SpecTimeout(specTimeout))

	It("lets the command of docs/troubleshooting.md release the pods the uninstalled operator left", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newGroup("abandoned", "a"))
		pod := waitForLivePod(ctx, "abandoned")

		By("uninstalling the operator, then deleting the group and its pod")
		stopManager()
		DeferCleanup(func() { stopManager = startManager() })
		Expect(k8sClient.Delete(ctx, newGroup("abandoned"))).To(Succeed())
		dropHistoryFinalizers(ctx)
		bind(ctx, pod.Name)
		finishPod(ctx, pod.Name, 0, "Completed")
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, keyOf(pod), &corev1.Pod{})).To(Succeed(), "the finalizer keeps the pod")
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

		By("running the documented command")
		runDocBlocks(ctx, GinkgoT().TempDir(), "stuck-tracking", nil)
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, keyOf(pod), &corev1.Pod{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the pod is gone: %v", err)
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))

	It("releases the pods of a group being deleted, and of a group that is gone", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newGroup("leaving", "a"), newGroup("gone", "a"))
		leaving := waitForLivePod(ctx, "leaving")
		gone := waitForLivePod(ctx, "gone")
		// The finalizer oaat.io/history is the last write of a group's first pass: a group deleted
		// before it is gone at once, its pods left to the garbage collector (and the pass below).
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "leaving").Finalizers).To(ContainElement(v1alpha1.FinalizerHistory), "its first pass is over")
		}).WithContext(ctx).Should(Succeed())

		By("deleting a group while its item runs: the pod loses the finalizer with the group's")
		Expect(k8sClient.Delete(ctx, newGroup("leaving"))).To(Succeed())
		Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(k8sClient.Get(ctx, keyOf(leaving), pod)).To(Succeed())
			g.Expect(pod.Finalizers).NotTo(ContainElement(v1alpha1.FinalizerRunTracking))
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "leaving"}, &v1alpha1.OaatGroup{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "group leaving: %v", err)
		}).WithContext(ctx).Should(Succeed())

		By("removing a group while the operator is stopped, then deleting its pod as the garbage collector would")
		stopManager()
		Expect(k8sClient.Delete(ctx, newGroup("gone"))).To(Succeed())
		dropHistoryFinalizers(ctx)
		stopManager = startManager()
		Expect(k8sClient.Delete(ctx, gone)).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, keyOf(gone), &corev1.Pod{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the orphaned pod is released and gone: %v", err)
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(specTimeout))
})

// operatorWrites are the writes the API server counted from before to after that the manager
// makes (the test's own are left out: its pod status updates, its creates), by request; leases
// are left out too (leader election renews them by time, not by run).
func operatorWrites(before, after perfkit.Requests) map[string]float64 {
	writes := map[string]float64{}
	for key, n := range after {
		if !key.Write() || key.Failed || key.Group == "coordination.k8s.io" || (key.Resource == "pods" && key.Subresource == "status") ||
			(key.Verb == "POST" && key.Group == "oaat.io" && (key.Resource == "oaattypes" || key.Resource == "oaatgroups")) {
			continue
		}
		if d := n - before[key]; d > 0 {
			writes[key.String()] = d
		}
	}
	return writes
}

// runDocBlocks runs the blocks of the docs marked checked-by: tests/integration name, in dir, as a
// user's shell runs them against the suite's API server (kubectl and the plugin on its PATH), the
// placeholders replaced by values; every command must succeed.
func runDocBlocks(ctx SpecContext, dir, name string, values map[string]string) {
	GinkgoHelper()
	blocks, err := support.CheckedBlocks("../..", "tests/integration", name)
	Expect(err).NotTo(HaveOccurred())
	plugin, kubeconfig := buildKubectlOaat()
	bin := filepath.Dir(plugin)
	Expect(os.Symlink(os.Getenv("TEST_ASSET_KUBECTL"), filepath.Join(bin, "kubectl"))).To(Succeed())
	env := []string{"KUBECONFIG=" + kubeconfig, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, b := range blocks {
		out, err := support.RunCheckedBlock(ctx, dir, env, b, values)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s:\n%s%s\n", b.Where(), b.Text, out)
	}
}

// bind binds the pod to a node, so that its deletion waits for the kubelet (the test plays it).
func bind(ctx context.Context, name string) {
	ExpectWithOffset(1, clientset.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
	}, metav1.CreateOptions{})).To(Succeed())
}

// untrackPod removes the finalizer oaat.io/run-tracking from the pod, as an administrator clearing
// it would (or as a pod created by an earlier version of the operator lacks it).
func untrackPod(ctx context.Context, name string) {
	ExpectWithOffset(1, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !controllerutil.RemoveFinalizer(pod, v1alpha1.FinalizerRunTracking) {
			return nil
		}
		return client.IgnoreNotFound(k8sClient.Update(ctx, pod))
	})).To(Succeed())
}

// dropRunTrackingFinalizers removes the finalizer oaat.io/run-tracking from the test's pods: with
// no manager to remove it, it would keep them.
func dropRunTrackingFinalizers(ctx context.Context) {
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	for i := range pods.Items {
		untrackPod(ctx, pods.Items[i].Name)
	}
}

// setFinalizer adds the finalizer to the pod (on) or removes it, as another controller would.
func setFinalizer(ctx context.Context, name, finalizer string, on bool) {
	ExpectWithOffset(1, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod := &corev1.Pod{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod); err != nil {
			return client.IgnoreNotFound(err)
		}
		changed := controllerutil.AddFinalizer(pod, finalizer)
		if !on {
			changed = controllerutil.RemoveFinalizer(pod, finalizer)
		}
		if !changed {
			return nil
		}
		return client.IgnoreNotFound(k8sClient.Update(ctx, pod))
	})).To(Succeed())
}
