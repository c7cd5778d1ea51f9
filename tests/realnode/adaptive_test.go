//go:build realnode

package realnode

import (
	"fmt"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// loadScript asks the target for one unit of work: an overloaded or down target's refusal (HTTP
// 503, which busybox's wget exits 1 on) is exit code 75 (EX_TEMPFAIL), the code the circuit
// breaker counts in these tests. No -T: Debian's busybox 1.35 wget crashes with it.
const loadScript = `wget -q -O - "$TARGET?item=$1" || { echo "the target refused item $1"; exit 75; }`

// nodeAddress is the real node's InternalIP, where the item pods reach services of the host.
func nodeAddress(ctx SpecContext) string {
	GinkgoHelper()
	nodes := &corev1.NodeList{}
	Expect(k8sClient.List(ctx, nodes)).To(Succeed())
	for _, n := range nodes.Items {
		if _, fake := n.Annotations["kwok.x-k8s.io/node"]; fake {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				return a.Address
			}
		}
	}
	Fail("no real node with an InternalIP")
	return ""
}

var _ = Describe("A lock with spec.adaptive against a target whose latency and errors grow with its clients", func() {
	It("grows its capacity while the target copes, falls to min when it refuses, and grows again once it recovers",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			target, err := support.StartLoadTarget(net.JoinHostPort(nodeAddress(ctx), "0"), 2, 200*time.Millisecond)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(target.Close)
			work := busybox("main", loadScript)
			work.Env = []corev1.EnvVar{{Name: "TARGET", Value: target.URL()}}
			lock := support.Lock(ns, "load", 3)
			lock.Spec.Adaptive = &v1alpha1.AdaptiveCapacity{Min: 1, Max: 3}
			objs := []client.Object{newType("load", corev1.PodSpec{Containers: []corev1.Container{work}}), lock}
			for i := range 3 {
				objs = append(objs, support.Group(ns, fmt.Sprintf("load-%d", i), "load", "a", "b").
					Locks("load").Frequency("1s").FailureCoolOff("1s").Obj())
			}
			create(ctx, objs...)
			// reaches waits until the lock's adaptive capacity is capacity, changed for reason with a
			// message saying what, and prints how long after since it got there.
			reaches := func(capacity int32, reason v1alpha1.AdaptiveChangeReason, what, since string) {
				GinkgoHelper()
				from := time.Now()
				Eventually(func(g Gomega) {
					l := &v1alpha1.OaatLock{}
					g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), l)).To(Succeed())
					a := l.Status.Adaptive
					g.Expect(a).NotTo(BeNil())
					g.Expect(a.Capacity).To(BeEquivalentTo(capacity))
					g.Expect(a.LastChange).NotTo(BeNil())
					g.Expect(a.LastChange.Reason).To(Equal(reason))
					g.Expect(a.LastChange.Message).To(ContainSubstring(what))
				}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
				GinkgoWriter.Printf("adaptive capacity %d %s after %s\n", capacity, time.Since(from).Round(time.Second), since)
			}

			By("growing from 1 to 2 while the target serves 2 clients")
			reaches(2, v1alpha1.AdaptiveFastSuccesses, "fast successes", "the start")

			By("falling to 1 once the target refuses every client (down)")
			target.SetLimit(0)
			reaches(1, v1alpha1.AdaptiveCountedFailure, "exit code 75", "the target went down")

			By("growing to 2 again once the target serves 2 clients again")
			target.SetLimit(2)
			reaches(2, v1alpha1.AdaptiveFastSuccesses, "fast successes", "the target recovered")
			most, served, refused := target.Stats()
			GinkgoWriter.Printf("the target: at most %d clients at once, %d served, %d refused\n", most, served, refused)
			Expect(most).To(BeNumerically("<=", 3), "never more clients than the lock's capacity")
			Expect(refused).To(BeNumerically(">=", 1), "the target refused the runs that made the capacity fall")
		})
})
