//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// stubborn is a script that writes to /out/signals when it starts and when it gets SIGTERM, and
// keeps running after SIGTERM: only the SIGKILL that follows the grace period ends it (exit 137).
const stubborn = `trap 'echo TERM >>/out/signals' TERM; echo started >/out/signals; while true; do sleep 1; done`

// gracePeriod is the stubborn pods' terminationGracePeriodSeconds.
const gracePeriod = 2

// signalsDir is a directory of this machine that a stubborn pod writes its signals file into
// (a hostPath volume): the file outlives the pod, which the operator deletes.
func signalsDir() string {
	dir := filepath.Join(cluster.StateDir, "signals", ns)
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	return dir
}

// stubbornSpec runs stubborn with its signals file in dir.
func stubbornSpec(dir string) corev1.PodSpec {
	c := busybox("main", stubborn)
	c.VolumeMounts = []corev1.VolumeMount{{Name: "out", MountPath: "/out"}}
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](gracePeriod),
		Containers:                    []corev1.Container{c},
		Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: dir, Type: ptr.To(corev1.HostPathDirectoryOrCreate),
		}}}},
	}
}

// signals returns the lines the stubborn container wrote.
func signals(dir string) string {
	data, _ := os.ReadFile(filepath.Join(dir, "signals"))
	return string(data)
}

// waitForRunningContainer waits until the group's current run has a pod whose container runs.
func waitForRunningContainer(ctx context.Context, group string) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Eventually(func(g Gomega) {
		og := &v1alpha1.OaatGroup{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, og)).To(Succeed())
		g.Expect(og.Status.CurrentRun).NotTo(BeNil())
		p := &corev1.Pod{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: og.Status.CurrentRun.PodName}, p)).To(Succeed())
		g.Expect(p.Status.ContainerStatuses).NotTo(BeEmpty())
		g.Expect(p.Status.ContainerStatuses[0].State.Running).NotTo(BeNil(), "container state %+v", p.Status.ContainerStatuses[0].State)
		pod = p
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	return pod
}

// runEvents counts the events with the reason about the group that name the pod, each as often
// as its series says it happened.
func runEvents(ctx context.Context, g Gomega, group, pod, reason string) int {
	list, err := clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind != "OaatGroup" || e.Regarding.Name != group || e.Reason != reason ||
			!strings.Contains(e.Note, pod) {
			continue
		}
		n++
		if e.Series != nil {
			n += int(e.Series.Count) - 1
		}
	}
	return n
}

// expectRecordedOnce checks that the run of pod was recorded by exactly one event of the reason
// and one count in the item's status, and stays so for a while. The event follows the status
// write and reaches the API server from the recorder's queue, a moment after the status: it is
// waited for first.
func expectRecordedOnce(ctx context.Context, group, item, pod, reason string, failures int32) {
	GinkgoHelper()
	recordedOnce := func(g Gomega) {
		g.Expect(runEvents(ctx, g, group, pod, reason)).To(Equal(1), "%s events for pod %s", reason, pod)
		og := &v1alpha1.OaatGroup{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, og)).To(Succeed())
		g.Expect(support.ItemStatus(og, item).FailureCount).To(Equal(failures), "failureCount of item %q", item)
	}
	Eventually(recordedOnce).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	Consistently(recordedOnce).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
}

var _ = Describe("Real runs", func() {
	It("are judged by the process's own exit code through exitCodes.success and doNotRetry", func(ctx SpecContext) {
		create(ctx, newType("exits", corev1.PodSpec{Containers: []corev1.Container{busybox("main", `exit "${1#code-}"`)}}))
		group := newGroup("exits", "exits", "code-0", "code-3", "code-4", "code-5")
		group.Spec.FailureCoolOff = "1h"
		group.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}, DoNotRetry: []int32{4}}
		create(ctx, group)
		for item, want := range map[string]struct {
			code    int32
			success bool
		}{"code-0": {0, true}, "code-3": {3, true}, "code-4": {4, false}, "code-5": {5, false}} {
			status := waitForOutcome(ctx, "exits", item, 2*time.Minute)
			Expect(status.LastExitCode).To(HaveValue(Equal(want.code)), "item %s", item)
			Expect(status.LastSuccess != nil).To(Equal(want.success), "item %s succeeded", item)
			if item == "code-4" {
				Expect(status.ParkedGeneration).NotTo(BeZero(), "item %s parked", item)
			} else {
				Expect(status.ParkedGeneration).To(BeZero(), "item %s parked", item)
			}
		}
	})

	It("end at runTimeout: SIGTERM, then SIGKILL after the grace period, recorded once", func(ctx SpecContext) {
		dir := signalsDir()
		create(ctx, newType("stubborn", stubbornSpec(dir)))
		group := newGroup("timeout", "stubborn", "slow")
		group.Spec.RunTimeout = "6s"
		group.Spec.FailureCoolOff = "1h"
		create(ctx, group)
		pod := waitForRunningContainer(ctx, "timeout")
		status := waitForOutcome(ctx, "timeout", "slow", time.Minute)
		Expect(status.LastReason).To(Equal(string(v1alpha1.ReasonDeadlineExceeded)))
		Expect(status.LastExitCode).To(HaveValue(Equal(int32(137))), "killed by SIGKILL after ignoring SIGTERM")
		Expect(signals(dir)).To(Equal("started\nTERM\n"), "what the process wrote: it got SIGTERM first")
		expectRecordedOnce(ctx, "timeout", "slow", pod.Name, string(v1alpha1.ReasonRunFailed), 1)
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(MatchError(ContainSubstring("not found")), "the pod is gone")
	})

	It("end when a blackout window with stopRunning opens: SIGTERM, then SIGKILL, recorded once as interrupted", func(ctx SpecContext) {
		dir := signalsDir()
		create(ctx, newType("stubborn", stubbornSpec(dir)), newGroup("blackout", "stubborn", "nightly"))
		pod := waitForRunningContainer(ctx, "blackout")
		start := time.Now().UTC().Truncate(time.Minute).Add(-time.Minute)
		og := &v1alpha1.OaatGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "blackout"}, og)).To(Succeed())
		og.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{
			Start: start.Format("15:04"), End: start.Add(31 * time.Minute).Format("15:04"), StopRunning: true,
		}}
		Expect(k8sClient.Update(ctx, og)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(runEvents(ctx, g, "blackout", pod.Name, string(v1alpha1.ReasonRunInterrupted))).To(Equal(1))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(signals(dir)).To(Equal("started\nTERM\n"), "what the process wrote: it got SIGTERM first")
		expectRecordedOnce(ctx, "blackout", "nightly", pod.Name, string(v1alpha1.ReasonRunInterrupted), 0)
		Expect(runEvents(ctx, Default, "blackout", pod.Name, string(v1alpha1.ReasonRunFailed))).To(BeZero())
	})

	It("of an image that cannot be pulled are freed by runTimeout", func(ctx SpecContext) {
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "quay.io/oaat-io/no-such-image:v0"}}}
		create(ctx, newType("unpullable", spec))
		group := newGroup("unpullable", "unpullable", "first", "second")
		group.Spec.RunTimeout = "8s"
		group.Spec.FailureCoolOff = "1h"
		create(ctx, group)
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
			waiting := pods.Items[0].Status.ContainerStatuses
			g.Expect(waiting).NotTo(BeEmpty())
			g.Expect(waiting[0].State.Waiting).NotTo(BeNil())
			g.Expect(waiting[0].State.Waiting.Reason).To(BeElementOf("ErrImagePull", "ImagePullBackOff"))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the kubelet fails to pull the image")
		for _, item := range []string{"first", "second"} {
			status := waitForOutcome(ctx, "unpullable", item, time.Minute)
			Expect(status.LastReason).To(Equal(string(v1alpha1.ReasonDeadlineExceeded)), "item %s", item)
			Expect(status.FailureCount).To(Equal(int32(1)), "item %s", item)
		}
	})

	It("whose pod a user deletes are recorded once as failed, and the next item runs", func(ctx SpecContext) {
		dir := signalsDir()
		create(ctx, newType("stubborn", stubbornSpec(dir)))
		group := newGroup("deleted", "stubborn", "first", "second")
		group.Spec.FailureCoolOff = "1h"
		create(ctx, group)
		pod := waitForRunningContainer(ctx, "deleted")
		item := pod.Annotations[v1alpha1.AnnotationItem]
		Expect(k8sClient.Delete(ctx, pod)).To(Succeed())
		status := waitForOutcome(ctx, "deleted", item, time.Minute)
		Expect(status.LastSuccess).To(BeNil())
		Expect(signals(dir)).To(HavePrefix("started\nTERM\n"), "the kubelet sent SIGTERM")
		expectRecordedOnce(ctx, "deleted", item, pod.Name, string(v1alpha1.ReasonRunFailed), 1)
		next := waitForRunningContainer(ctx, "deleted")
		Expect(next.Annotations[v1alpha1.AnnotationItem]).NotTo(Equal(item), "the other item runs next")
	})

	It("whose init container fails are failures with its exit code", func(ctx SpecContext) {
		spec := corev1.PodSpec{
			InitContainers: []corev1.Container{busybox("init", `echo "init $1"; exit 7`)},
			Containers:     []corev1.Container{busybox("main", `echo "never runs"`)},
		}
		create(ctx, newType("badinit", spec), newGroup("badinit", "badinit", "x"))
		status := waitForOutcome(ctx, "badinit", "x", time.Minute)
		Expect(status.LastSuccess).To(BeNil())
		Expect(status.LastExitCode).To(HaveValue(Equal(int32(7))))
		Expect(podLog(ctx, status.LastPodName, "init")).To(Equal("init x\n"))
	})

	It("of a pod with two containers succeed when both do, each given the item", func(ctx SpecContext) {
		spec := corev1.PodSpec{Containers: []corev1.Container{
			busybox("first", `printf 'first=[%s]\n' "$OAAT_ITEM"`),
			busybox("second", `sleep 2; printf 'second=[%s]\n' "$1"`),
		}}
		create(ctx, newType("pair", spec), newGroup("pair", "pair", "/srv/photos"))
		status := waitForOutcome(ctx, "pair", "/srv/photos", time.Minute)
		Expect(status.LastSuccess).NotTo(BeNil(), "%s, exit %v", status.LastReason, status.LastExitCode)
		Expect(podLog(ctx, status.LastPodName, "first")).To(Equal("first=[/srv/photos]\n"))
		Expect(podLog(ctx, status.LastPodName, "second")).To(Equal("second=[/srv/photos]\n"))
	})
})
