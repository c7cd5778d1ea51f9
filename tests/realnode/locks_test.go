//go:build realnode

package realnode

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// timedRun is a script that reads the kernel's uptime (one clock for every container of the
// node) when it starts and after it has worked for two seconds, and prints both.
const timedRun = `read s _ </proc/uptime; sleep 2; read e _ </proc/uptime; echo "$s $e"`

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
			&v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Name: "nas", Namespace: ns}, Spec: v1alpha1.OaatLockSpec{Capacity: 1}},
			&v1alpha1.OaatLock{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: v1alpha1.OaatLockSpec{Capacity: 1}})
		for _, name := range []string{"photos", "docs", "mail", "reports"} {
			group := newGroup(name, "timed", items...)
			group.Spec.Locks = locks[name]
			create(ctx, group)
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
})
