//go:build realnode

package realnode

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// drainTimeout is the --timeout of the spec's kubectl drain: long enough for the item's pod
// (grace period 2 s) and one replica of the operator (10 s) to be evicted and gone, after which
// the drain is left retrying the last replica, which the PodDisruptionBudget refuses.
const drainTimeout = 20 * time.Second

// resumable is an item's script that runs until it is stopped the first time (SIGTERM ends it,
// exit 143), and succeeds at once the next time: its first start leaves a mark in /out, a
// directory of this machine that outlives the pod.
const resumable = `if [ -e /out/started ]; then echo "resumed $1"; exit 0; fi; touch /out/started; ` +
	`trap 'exit 143' TERM; while true; do sleep 1; done`

// disruptions follows the pods of a namespace (those matching a label selector) through a watch
// and keeps the reason of the DisruptionTarget condition each one showed: the condition the
// Eviction API sets on a pod it evicts, seen before the pod is gone.
type disruptions struct {
	mu      sync.Mutex
	reasons map[string]string
	stop    func()
}

// watchDisruptions starts following the pods of namespace that match selector; stop it with
// Stop.
func watchDisruptions(ctx context.Context, namespace, selector string) *disruptions {
	GinkgoHelper()
	w, err := clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	Expect(err).NotTo(HaveOccurred())
	d := &disruptions{reasons: map[string]string{}, stop: w.Stop}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Error {
				continue
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
					d.mu.Lock()
					d.reasons[pod.Name] = c.Reason
					d.mu.Unlock()
				}
			}
		}
	}()
	return d
}

// Reasons returns, by pod name, the reason of the DisruptionTarget condition of each pod that
// showed one.
func (d *disruptions) Reasons() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]string, len(d.reasons))
	for name, reason := range d.reasons {
		out[name] = reason
	}
	return out
}

// Stop ends the watch.
func (d *disruptions) Stop() { d.stop() }

// kubectl runs the suite's kubectl (make's pinned binary) against the cluster and returns its
// combined output and error.
func kubectl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, os.Getenv("KUBECTL"), append([]string{"--kubeconfig", adminKubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("kubectl %v:\n%s\n", args, out)
	return string(out), err
}

// groupPods lists the pods of the group in the test's namespace.
func groupPods(ctx context.Context, g Gomega, group string) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelGroup: group})).To(Succeed())
	return pods.Items
}

// unscheduled reports whether the scheduler has said it cannot place the pod.
func unscheduled(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

var _ = Describe("A drain of the real node (kubectl drain)", func() {
	It("evicts the running item, recorded as Disrupted with no failure and no cool-off; is refused the operator's last replica by its PodDisruptionBudget; after uncordon the item runs again and succeeds",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			dir := signalsDir()
			c := busybox("main", resumable)
			c.VolumeMounts = []corev1.VolumeMount{{Name: "out", MountPath: "/out"}}
			create(ctx, newType("resumable", corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](gracePeriod),
				Containers:                    []corev1.Container{c},
				Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
				}}}},
			}))
			group := newGroup("drained", "resumable", "/srv/photos")
			group.Spec.FailureCoolOff = "1h"
			create(ctx, group)
			pod := waitForRunningContainer(ctx, "drained")
			Expect(pod.Spec.NodeName).To(Equal(realNodeName))

			replicas := operatorPods(ctx, Default)
			Expect(replicas).To(HaveLen(2), "the operator's two Ready replicas before the drain")
			pdb := &policyv1.PodDisruptionBudget{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, pdb)).To(Succeed())
			Expect(pdb.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))))

			items := watchDisruptions(ctx, ns, v1alpha1.LabelGroup+"=drained")
			DeferCleanup(items.Stop)
			managers := watchDisruptions(ctx, operatorNamespace, "control-plane=controller-manager")
			DeferCleanup(managers.Stop)
			// Whatever happens below, the node takes pods again for the specs that follow.
			DeferCleanup(func(ctx SpecContext) {
				_, err := kubectl(ctx, "uncordon", realNodeName)
				Expect(err).NotTo(HaveOccurred())
				waitForOperator(ctx)
				Eventually(func(g Gomega) {
					dns := &appsv1.Deployment{}
					g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "coredns"}, dns)).To(Succeed())
					g.Expect(dns.Status.AvailableReplicas).To(Equal(*dns.Spec.Replicas))
				}).WithContext(ctx).WithTimeout(2*time.Minute).Should(Succeed(), "the cluster DNS back on the node")
			}, NodeTimeout(5*time.Minute))

			By("draining " + realNodeName + " with kubectl drain: every pod is evicted but the last replica of the operator")
			start := time.Now()
			out, err := kubectl(ctx, "drain", realNodeName, "--ignore-daemonsets", "--delete-emptydir-data",
				"--timeout", drainTimeout.String())
			GinkgoWriter.Printf("kubectl drain returned after %s\n", time.Since(start).Round(time.Millisecond))
			Expect(err).To(HaveOccurred(), "the drain cannot finish: the PodDisruptionBudget keeps one replica of the operator")
			Expect(out).To(ContainSubstring("node/" + realNodeName + " cordoned"))
			Expect(out).To(ContainSubstring("pod/" + pod.Name + " evicted"))
			Expect(out).To(ContainSubstring("Cannot evict pod as it would violate the pod's disruption budget"))

			node := &corev1.Node{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: realNodeName}, node)).To(Succeed())
			Expect(node.Spec.Unschedulable).To(BeTrue(), "the node is cordoned")

			By("the item's pod evicted through the Eviction API, its run recorded as Disrupted: no failure, no cool-off")
			Expect(items.Reasons()).To(HaveKeyWithValue(pod.Name, "EvictionByEvictionAPI"))
			item := pod.Annotations[v1alpha1.AnnotationItem]
			Eventually(func(g Gomega) {
				og := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
				it := support.ItemStatus(og, item)
				g.Expect(it).NotTo(BeNil())
				g.Expect(it.LastPodName).To(Equal(pod.Name))
				g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDisrupted)))
				g.Expect(it.FailureCount).To(BeZero())
				g.Expect(it.LastFailure).To(BeNil())
				g.Expect(it.LastSuccess).To(BeNil())
				g.Expect(it.WaitReason).NotTo(Equal(v1alpha1.WaitCoolingOff))
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			expectRecordedOnce(ctx, "drained", item, pod.Name, string(v1alpha1.ReasonRunInterrupted), 0)
			Expect(runEvents(ctx, Default, "drained", pod.Name, string(v1alpha1.ReasonRunFailed))).To(BeZero())

			By("one replica of the operator evicted, the last one kept, leading")
			Expect(managers.Reasons()).To(HaveLen(1), "replicas the drain evicted")
			left := operatorPods(ctx, Default)
			Expect(left).To(HaveLen(1), "Ready replicas while the node is cordoned")
			Expect(managers.Reasons()).NotTo(HaveKey(left[0].Name))
			Expect(out).To(ContainSubstring(`error when evicting pods/%q -n %q: global timeout reached`, left[0].Name, operatorNamespace),
				"the drain retried the last replica until its timeout")
			Eventually(func(g Gomega) {
				leader, _ := leaderPod(ctx, g)
				g.Expect(leader.Name).To(Equal(left[0].Name))
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

			By("the item started again at once, its pod waiting for a node: one pod at a time, none runs while cordoned")
			var next corev1.Pod
			Eventually(func(g Gomega) {
				og := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
				g.Expect(og.Status.CurrentRun).NotTo(BeNil())
				g.Expect(og.Status.CurrentRun.PodName).NotTo(Equal(pod.Name))
				g.Expect(og.Status.CurrentRun.Item).To(Equal(item))
				// The group counts the pod as its active run, as a Job counts a Pending pod active;
				// the item keeps its Disrupted outcome and waits for nothing but the run.
				running := meta.FindStatusCondition(og.Status.Conditions, v1alpha1.ConditionRunning)
				g.Expect(running).NotTo(BeNil())
				g.Expect(running.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(running.Message).To(ContainSubstring(og.Status.CurrentRun.PodName))
				it := support.ItemStatus(og, item)
				g.Expect(it.LastReason).To(Equal(string(v1alpha1.ReasonDisrupted)))
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitRunning))
				g.Expect(it.NextEligibleAt).To(BeNil())
				pods := groupPods(ctx, g, "drained")
				g.Expect(pods).To(HaveLen(1), "the evicted pod is gone, the next one exists")
				g.Expect(pods[0].Name).To(Equal(og.Status.CurrentRun.PodName))
				g.Expect(unscheduled(&pods[0])).To(BeTrue(), "conditions %+v", pods[0].Status.Conditions)
				next = pods[0]
			}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
			Consistently(func(g Gomega) {
				pods := groupPods(ctx, g, "drained")
				g.Expect(pods).To(HaveLen(1))
				g.Expect(pods[0].Name).To(Equal(next.Name))
				g.Expect(pods[0].Spec.NodeName).To(BeEmpty())
				og := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
				g.Expect(support.ItemStatus(og, item).FailureCount).To(BeZero())
			}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

			By("uncordoning the node: the item runs again and succeeds")
			_, err = kubectl(ctx, "uncordon", realNodeName)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(g Gomega) {
				og := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(group), og)).To(Succeed())
				it := support.ItemStatus(og, item)
				g.Expect(it.LastSuccess).NotTo(BeNil(), "%s, exit %v", it.LastReason, it.LastExitCode)
				g.Expect(it.LastPodName).To(Equal(next.Name))
				g.Expect(it.FailureCount).To(BeZero())
			}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
			Expect(podLog(ctx, next.Name, "main")).To(Equal("resumed " + item + "\n"))
			_, err = os.Stat(filepath.Join(dir, "started"))
			Expect(err).NotTo(HaveOccurred(), "the first run started before the drain")
			Expect(tracker.PodsOf(ns, "drained")).To(HaveLen(2), "two pods: the evicted one and the one that succeeded")
		})
})
