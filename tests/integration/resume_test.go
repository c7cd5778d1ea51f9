package integration

import (
	"slices"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("Resuming after a restart or a failover", func() {
	It("reconciles the groups due longest first", func(ctx SpecContext) {
		// Named so that the informers' list (by name) has them in the reverse of their order of
		// overdue: the least overdue first.
		overdueBy := map[string]time.Duration{
			"resume-a": 2 * time.Second, "resume-b": 6 * time.Second, "resume-c": 20 * time.Second,
			"resume-d": time.Minute, "resume-e": 200 * time.Second,
		}
		names := []string{"resume-a", "resume-b", "resume-c", "resume-d", "resume-e"}
		create(ctx, newOaatType(typeName))
		first := map[string]string{}
		for _, name := range names {
			create(ctx, newGroup(name, "x", "y"))
			pod := waitForLivePod(ctx, name)
			markRunning(ctx, pod.Name)
			first[name] = pod.Name
			Eventually(func(g Gomega) {
				g.Expect(getGroup(ctx, g, name).Status.CurrentRun).To(HaveField("PodName", pod.Name))
			}).WithContext(ctx).Should(Succeed())
		}

		By("ending each group's pod while no manager runs, each at its own time")
		stopManager()
		now := time.Now()
		for _, name := range names {
			finishPodAt(ctx, first[name], 0, "Completed", metav1.NewTime(now.Add(-overdueBy[name]).Truncate(time.Second)))
		}

		By("starting a manager with one worker, so that its order is the queue's")
		stopManager = startManagerWith(managerOptions{workers: 1})
		second := map[string]*corev1.Pod{}
		for _, name := range names {
			second[name] = waitForLivePod(ctx, name, first[name])
		}
		// One etcd orders every write: a resourceVersion made later is larger.
		order := slices.Clone(names)
		slices.SortFunc(order, func(a, b string) int {
			return int(resourceVersion(second[a]) - resourceVersion(second[b]))
		})
		Expect(order).To(Equal([]string{"resume-e", "resume-d", "resume-c", "resume-b", "resume-a"}),
			"the groups' next pods were created in this order")
	}, SpecTimeout(specTimeout))

	It("releases the Lease on a graceful stop, so that a warm standby leads at once", func(ctx SpecContext) {
		stopManager()
		stopLeader := startManagerWith(managerOptions{leaseNamespace: ns})
		lease := &coordinationv1.Lease{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
		}).WithContext(ctx).Should(Succeed())
		leader := *lease.Spec.HolderIdentity
		stopManager = startManagerWith(managerOptions{leaseNamespace: ns})
		create(ctx, newOaatType(typeName), newGroup("standby", "a", "b"))
		firstPod := waitForLivePod(ctx, "standby")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(HaveValue(Equal(leader)), "the standby took the Lease while the leader held it")

		By("stopping the leader gracefully: it gives the Lease up, and the standby takes it within its retry period")
		stopLeader()
		stopped := time.Now()
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != leader).To(BeTrue(),
			"the stopped leader still holds the Lease: %v", lease.Spec.HolderIdentity)
		finishPod(ctx, firstPod.Name, 0, "Completed")
		waitForLivePodWithin(ctx, 5*time.Second, "standby", firstPod.Name)
		// The standby's elector tries every 2 s (RetryPeriod); the Lease would otherwise expire
		// only after 15 s (LeaseDuration).
		Expect(time.Since(stopped)).To(BeNumerically("<", 5*time.Second))
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).To(HaveValue(And(Not(BeEmpty()), Not(Equal(leader)))))
	}, SpecTimeout(time.Minute))
})

// resourceVersion is the object's resourceVersion as a number (etcd's revision of its last write).
func resourceVersion(obj client.Object) int64 {
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	Expect(err).NotTo(HaveOccurred())
	return rv
}
