//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// timedRun is a script that reads the kernel's uptime (one clock for every container of the
// node) when it starts and after it has worked for two seconds, and prints both.
var timedRun = timedRunFor(2)

// timedRunFor is timedRun with the process working for the given seconds.
func timedRunFor(seconds int) string {
	return fmt.Sprintf(`read s _ </proc/uptime; sleep %d; read e _ </proc/uptime; echo "$s $e"`, seconds)
}

// nodeUptime reads the kernel's uptime, the clock of timedRun: the test runs on the real node's
// machine, whose containers share its kernel.
func nodeUptime() float64 {
	GinkgoHelper()
	data, err := os.ReadFile("/proc/uptime")
	Expect(err).NotTo(HaveOccurred())
	fields := strings.Fields(string(data))
	Expect(fields).NotTo(BeEmpty(), "/proc/uptime")
	uptime, err := strconv.ParseFloat(fields[0], 64)
	Expect(err).NotTo(HaveOccurred())
	return uptime
}

// holderPods lists the pods of the lock's holders.
func holderPods(lock *v1alpha1.OaatLock) []string {
	pods := []string{}
	for _, h := range lock.Status.Holders {
		pods = append(pods, h.Pod)
	}
	return pods
}

// processRun is when one item's process ran, by the node's uptime in seconds.
type processRun struct {
	group, item string
	start, end  float64
}

func (r processRun) String() string {
	return fmt.Sprintf("%s/%s %.2f-%.2f", r.group, r.item, r.start, r.end)
}

// processRunOf reads the times the item's last pod printed.
func processRunOf(ctx context.Context, g Gomega, group, item string, status v1alpha1.ItemStatus) processRun {
	out := strings.Fields(podLog(ctx, status.LastPodName, "main"))
	g.Expect(out).To(HaveLen(2), "what pod %s printed", status.LastPodName)
	start, err := strconv.ParseFloat(out[0], 64)
	g.Expect(err).NotTo(HaveOccurred())
	end, err := strconv.ParseFloat(out[1], 64)
	g.Expect(err).NotTo(HaveOccurred())
	return processRun{group: group, item: item, start: start, end: end}
}

// overlapping sorts runs by start and returns the pairs whose processes were alive at the same
// time.
func overlapping(runs []processRun) []string {
	sort.Slice(runs, func(i, j int) bool { return runs[i].start < runs[j].start })
	var both []string
	for i := 1; i < len(runs); i++ {
		if runs[i].start <= runs[i-1].end {
			both = append(both, runs[i-1].String()+" and "+runs[i].String())
		}
	}
	return both
}

var _ = Describe("Shared locks on the real node", func() {
	It("never let two processes of the groups naming a lock of capacity 1 live at once, by the processes' own clock", SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		// photos and docs back up to the NAS; mail needs the NAS and the database (all or none);
		// reports needs only the database.
		locks := map[string][]string{"photos": {"nas"}, "docs": {"nas"}, "mail": {"nas", "db"}, "reports": {"db"}}
		items := []string{"one", "two"}
		create(ctx, newType("timed", corev1.PodSpec{Containers: []corev1.Container{busybox("main", timedRun)}}),
			support.Lock(ns, "nas", 1), support.Lock(ns, "db", 1))
		for _, name := range []string{"photos", "docs", "mail", "reports"} {
			create(ctx, support.Group(ns, name, "timed", items...).Locks(locks[name]...).Obj())
		}

		By("running every item of every group once")
		byLock := map[string][]processRun{}
		for name, names := range locks {
			for _, item := range items {
				status := waitForOutcome(ctx, name, item, 3*time.Minute)
				Expect(status.LastSuccess).NotTo(BeNil(), "group %s item %s: %s, exit %v", name, item, status.LastReason, status.LastExitCode)
				run := processRunOf(ctx, Default, name, item, status)
				for _, lock := range names {
					byLock[lock] = append(byLock[lock], run)
				}
			}
		}

		By("finding no two processes of a lock's groups alive at once")
		for lock, runs := range byLock {
			Expect(overlapping(runs)).To(BeEmpty(), "processes of the groups naming lock %s that overlapped", lock)
			GinkgoWriter.Printf("lock %s, by start: %v\n", lock, runs)
		}
		Expect(byLock["nas"]).To(HaveLen(6))
		Expect(byLock["db"]).To(HaveLen(4))

		By("leaving both locks without holder or waiter")
		Eventually(func(g Gomega) {
			for _, name := range []string{"nas", "db"} {
				lock := &v1alpha1.OaatLock{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lock)).To(Succeed())
				g.Expect(lock.Status.Holders).To(BeEmpty(), "lock %s", name)
				g.Expect(lock.Status.WaitingGroups).To(BeZero(), "lock %s", name)
			}
		}).WithContext(ctx).WithTimeout(15 * time.Second).Should(Succeed())
	})

	It("keep a lock's runs apart when the lock is deleted and created again while a run holds it", SpecTimeout(3*time.Minute), func(ctx SpecContext) {
		// held's one run works long enough for the lock to be re-created under it; photos and
		// docs, which name the same lock of capacity 1, wait for it meanwhile.
		const heldSeconds = 15
		key := client.ObjectKey{Namespace: ns, Name: "nas"}
		newLock := func() *v1alpha1.OaatLock {
			return support.Lock(ns, key.Name, 1)
		}
		create(ctx, newType("timed", corev1.PodSpec{Containers: []corev1.Container{busybox("main", timedRun)}}),
			newType("long", corev1.PodSpec{Containers: []corev1.Container{busybox("main", timedRunFor(heldSeconds))}}),
			newLock())
		create(ctx, support.Group(ns, "held", "long", "one").Locks("nas").Obj())

		By("starting held's run, which the lock lists")
		pod := waitForRunningContainer(ctx, "held")
		old := &v1alpha1.OaatLock{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, old)).To(Succeed())
			g.Expect(holderPods(old)).To(ConsistOf(pod.Name), "the holders of lock nas")
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(Succeed(), "lock nas lists held's run")

		By("letting two other groups naming the lock wait for it")
		items := []string{"one", "two"}
		for _, name := range []string{"photos", "docs"} {
			create(ctx, support.Group(ns, name, "timed", items...).Locks("nas").Obj())
		}
		Eventually(func(g Gomega) {
			for _, name := range []string{"photos", "docs"} {
				og := &v1alpha1.OaatGroup{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, og)).To(Succeed())
				g.Expect(og.Status.CurrentRun).To(BeNil(), "group %s runs beside held", name)
				g.Expect(og.Status.LockWait).NotTo(BeNil(), "group %s waits", name)
				g.Expect(og.Status.LockWait.Locks).To(ContainElement("nas"), "what group %s waits for", name)
			}
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(Succeed(), "photos and docs wait for lock nas")

		By("deleting the lock while held's process runs, and creating it again: a new object, without status")
		running := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), running)).To(Succeed())
		Expect(running.Status.ContainerStatuses).NotTo(BeEmpty())
		Expect(running.Status.ContainerStatuses[0].State.Running).NotTo(BeNil(), "held's container when the lock is deleted: %+v",
			running.Status.ContainerStatuses[0].State)
		deletedAt := nodeUptime()
		Expect(k8sClient.Delete(ctx, old)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, key, &v1alpha1.OaatLock{}))
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(BeTrue(), "lock nas is gone")
		recreated := newLock()
		create(ctx, recreated)
		Expect(recreated.UID).NotTo(Equal(old.UID), "the re-created lock is a new object")
		Expect(recreated.Status.Holders).To(BeEmpty(), "the re-created lock's holders, as created")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, key, recreated)).To(Succeed())
			g.Expect(recreated.UID).NotTo(Equal(old.UID))
			g.Expect(holderPods(recreated)).To(ConsistOf(pod.Name), "the holders of the re-created lock nas")
		}).WithContext(ctx).WithTimeout(10*time.Second).Should(Succeed(), "the re-created lock lists held's run again")
		listedAt := nodeUptime()
		og := &v1alpha1.OaatGroup{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "held"}, og)).To(Succeed())
		Expect(og.Status.CurrentRun).NotTo(BeNil(), "held's run when the re-created lock lists it")
		Expect(og.Status.CurrentRun.PodName).To(Equal(pod.Name), "held's run when the re-created lock lists it")

		By("running every item of the lock's groups")
		status := waitForOutcome(ctx, "held", "one", time.Minute)
		Expect(status.LastPodName).To(Equal(pod.Name), "held's recorded run")
		Expect(status.LastSuccess).NotTo(BeNil(), "group held item one: %s, exit %v", status.LastReason, status.LastExitCode)
		heldRun := processRunOf(ctx, Default, "held", "one", status)
		runs := []processRun{heldRun}
		for _, name := range []string{"photos", "docs"} {
			for _, item := range items {
				status := waitForOutcome(ctx, name, item, 2*time.Minute)
				Expect(status.LastSuccess).NotTo(BeNil(), "group %s item %s: %s, exit %v", name, item, status.LastReason, status.LastExitCode)
				runs = append(runs, processRunOf(ctx, Default, name, item, status))
			}
		}

		By("finding the re-create within held's process, and no two processes of the lock's groups alive at once")
		both := overlapping(runs) // sorts runs by start
		GinkgoWriter.Printf("lock nas deleted at %.2f, re-created and listing held's run at %.2f; %d runs, %d overlapping pairs; by start: %v\n",
			deletedAt, listedAt, len(runs), len(both), runs)
		Expect(heldRun.start).To(BeNumerically("<", deletedAt), "held's process started before the lock was deleted")
		Expect(listedAt).To(BeNumerically("<", heldRun.end), "the re-created lock listed held's run before its process ended")
		Expect(both).To(BeEmpty(), "processes of the groups naming lock nas that overlapped")
		Expect(runs).To(HaveLen(5))

		By("leaving the re-created lock without holder or waiter")
		Eventually(func(g Gomega) {
			lock := &v1alpha1.OaatLock{}
			g.Expect(k8sClient.Get(ctx, key, lock)).To(Succeed())
			g.Expect(lock.UID).To(Equal(recreated.UID))
			g.Expect(lock.Status.Holders).To(BeEmpty())
			g.Expect(lock.Status.WaitingGroups).To(BeZero())
		}).WithContext(ctx).WithTimeout(15 * time.Second).Should(Succeed())
	})
})
