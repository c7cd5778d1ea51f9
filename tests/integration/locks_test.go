package integration

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

func newLock(name string, capacity int32) *v1alpha1.OaatLock {
	return support.Lock(ns, name, capacity)
}

// lockedGroup is a group of the items that names the locks.
func lockedGroup(name string, locks []string, items ...string) *v1alpha1.OaatGroup {
	return support.Group(ns, name, typeName, items...).Locks(locks...).Obj()
}

func getLock(ctx context.Context, g Gomega, name string) *v1alpha1.OaatLock {
	lock := &v1alpha1.OaatLock{}
	g.ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lock)).To(Succeed())
	return lock
}

func holderPods(lock *v1alpha1.OaatLock) []string {
	var pods []string
	for _, h := range lock.Status.Holders {
		pods = append(pods, h.Pod)
	}
	return pods
}

// trackLock follows the live pods of all the groups naming the lock, as one set: its MaxLive is
// the most pods the lock ever had live at once.
func trackLock(ctx context.Context, lock string, groups ...string) *support.OverlapTracker {
	GinkgoHelper()
	tracker := support.NewLockTracker(lock, groups, labelTestPod)
	watch, err := support.WatchPods(ctx, clientset, ns, tracker)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(watch.Stop()).To(Succeed(), "the watch of lock %s did not see every pod event", lock)
	})
	return tracker
}

// liveOf lists the live pods of the groups, in all.
func liveOf(ctx context.Context, g Gomega, groups ...string) []corev1.Pod {
	var live []corev1.Pod
	for _, group := range groups {
		pods, err := livePodsOf(ctx, group)
		g.ExpectWithOffset(1, err).NotTo(HaveOccurred())
		live = append(live, pods...)
	}
	return live
}

// liveAcross waits until the groups have exactly n live pods in all, and returns them.
func liveAcross(ctx context.Context, n int, groups ...string) []corev1.Pod {
	GinkgoHelper()
	var live []corev1.Pod
	Eventually(func(g Gomega) {
		live = liveOf(ctx, g, groups...)
		g.Expect(podNames(live)).To(HaveLen(n))
	}).WithContext(ctx).Should(Succeed())
	return live
}

// expectLiveAcross checks for a while that the groups have n live pods in all.
func expectLiveAcross(ctx context.Context, n int, during time.Duration, groups ...string) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		g.Expect(podNames(liveOf(ctx, g, groups...))).To(HaveLen(n))
	}).WithContext(ctx).WithTimeout(during).Should(Succeed())
}

// expectWaiting waits until the group waits for the lock: status.lockWait names it, and an item
// says LockHeld.
func expectWaiting(ctx context.Context, group, lock string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		st := getGroup(ctx, g, group).Status
		g.Expect(st.LockWait).NotTo(BeNil())
		g.Expect(st.LockWait.Locks).To(ContainElement(lock))
		g.Expect(slices.ContainsFunc(st.Items, func(it v1alpha1.ItemStatus) bool {
			return it.WaitReason == v1alpha1.WaitLockHeld
		})).To(BeTrue(), "no item of %s waits with reason LockHeld: %+v", group, st.Items)
	}).WithContext(ctx).Should(Succeed())
}

var _ = Describe("Shared locks", func() {
	It("never runs two pods of groups sharing a lock of capacity 1, and hands the slot to the waiting group", func(ctx SpecContext) {
		nas := trackLock(ctx, "nas", "left", "right")
		create(ctx, newOaatType(typeName), newLock("nas", 1),
			lockedGroup("left", []string{"nas"}, "l1", "l2"), lockedGroup("right", []string{"nas"}, "r1", "r2"))

		var order []string
		for i := range 4 {
			pod := liveAcross(ctx, 1, "left", "right")[0]
			group := pod.Labels[v1alpha1.LabelGroup]
			other := map[string]string{"left": "right", "right": "left"}[group]
			order = append(order, group)
			// The other group has an item due but for the last run, when it has run both.
			waiting := int32(1)
			if i == 3 {
				waiting = 0
			}
			By("recording the holder before the pod, and making the other group wait")
			Eventually(func(g Gomega) {
				lock := getLock(ctx, g, "nas")
				g.Expect(holderPods(lock)).To(ConsistOf(pod.Name))
				g.Expect(lock.Status.Holders[0].Group).To(Equal(group))
				g.Expect(lock.Status.HolderCount).To(Equal(int32(1)))
				g.Expect(lock.Status.WaitingGroups).To(Equal(waiting))
			}).WithContext(ctx).Should(Succeed())
			if waiting > 0 {
				expectWaiting(ctx, other, "nas")
			}
			markRunning(ctx, pod.Name)
			expectLiveAcross(ctx, 1, time.Second, "left", "right")
			finishPod(ctx, pod.Name, 0, "Completed")
		}
		By("alternating: the group that waited gets the freed slot, though the other has an item due")
		Expect(order).To(Or(Equal([]string{"left", "right", "left", "right"}), Equal([]string{"right", "left", "right", "left"})))
		Eventually(func(g Gomega) {
			g.Expect(getLock(ctx, g, "nas").Status.Holders).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		Expect(nas.MaxLive(ns, "nas")).To(Equal(1), "pods of groups sharing the lock:\n%s", nas.Describe(ns))
	})

	It("runs at most two pods of three groups sharing a lock of capacity 2", func(ctx SpecContext) {
		groups := []string{"g1", "g2", "g3"}
		db := trackLock(ctx, "db", groups...)
		create(ctx, newOaatType(typeName), newLock("db", 2))
		for _, name := range groups {
			create(ctx, lockedGroup(name, []string{"db"}, "a"))
		}
		live := liveAcross(ctx, 2, groups...)
		expectLiveAcross(ctx, 2, time.Second, groups...)
		var waiting string
		for _, name := range groups {
			if !slices.ContainsFunc(live, func(p corev1.Pod) bool { return p.Labels[v1alpha1.LabelGroup] == name }) {
				waiting = name
			}
		}
		expectWaiting(ctx, waiting, "db")
		Eventually(func(g Gomega) {
			g.Expect(holderPods(getLock(ctx, g, "db"))).To(ConsistOf(live[0].Name, live[1].Name))
		}).WithContext(ctx).Should(Succeed())

		By("starting the third group once a slot frees")
		finishPod(ctx, live[0].Name, 0, "Completed")
		third := waitForLivePod(ctx, waiting)
		Eventually(func(g Gomega) {
			g.Expect(holderPods(getLock(ctx, g, "db"))).To(ConsistOf(live[1].Name, third.Name))
			g.Expect(getGroup(ctx, g, waiting).Status.LockWait).To(BeNil())
		}).WithContext(ctx).Should(Succeed())
		finishPod(ctx, live[1].Name, 0, "Completed")
		finishPod(ctx, third.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			g.Expect(getLock(ctx, g, "db").Status.Holders).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		Expect(db.MaxLive(ns, "db")).To(Equal(2), "pods of groups sharing the lock:\n%s", db.Describe(ns))
	})

	It("gives a group needing two locks both of them, ahead of groups needing one", func(ctx SpecContext) {
		nas := trackLock(ctx, "nas", "both", "nas-only")
		db := trackLock(ctx, "db", "both", "db-only")
		create(ctx, newOaatType(typeName), newLock("nas", 1), newLock("db", 1),
			lockedGroup("nas-only", []string{"nas"}, "n1", "n2"), lockedGroup("db-only", []string{"db"}, "d1"))
		nasPod := waitForLivePod(ctx, "nas-only")
		dbPod := waitForLivePod(ctx, "db-only")

		By("making the two-lock group wait, taking neither lock")
		create(ctx, lockedGroup("both", []string{"nas", "db"}, "b"))
		expectWaiting(ctx, "both", "nas")
		Expect(getGroup(ctx, Default, "both").Status.LockWait.Locks).To(ConsistOf("nas", "db"))

		By("keeping nas for it once nas-only's run ends, though nas-only has another item due: nas grants its request")
		finishPod(ctx, nasPod.Name, 0, "Completed")
		expectWaiting(ctx, "nas-only", "nas")
		expectLiveAcross(ctx, 0, 2*time.Second, "both", "nas-only")
		Expect(holderPods(getLock(ctx, Default, "nas"))).To(ConsistOf(getGroup(ctx, Default, "both").Status.LockWait.Pod))

		By("starting it once db frees too, with both locks")
		finishPod(ctx, dbPod.Name, 0, "Completed")
		pod := waitForLivePod(ctx, "both")
		Eventually(func(g Gomega) {
			g.Expect(holderPods(getLock(ctx, g, "nas"))).To(ConsistOf(pod.Name))
			g.Expect(holderPods(getLock(ctx, g, "db"))).To(ConsistOf(pod.Name))
		}).WithContext(ctx).Should(Succeed())
		expectLiveAcross(ctx, 0, time.Second, "nas-only")
		finishPod(ctx, pod.Name, 0, "Completed")
		waitForLivePod(ctx, "nas-only", nasPod.Name)
		Expect(nas.MaxLive(ns, "nas")).To(Equal(1), "pods sharing nas:\n%s", nas.Describe(ns))
		Expect(db.MaxLive(ns, "db")).To(Equal(1), "pods sharing db:\n%s", db.Describe(ns))
	})

	It("keeps four groups with three items each within a capacity of 2 through every run and a restart, leaking no slot", func(ctx SpecContext) {
		groups := []string{"w1", "w2", "w3", "w4"}
		db := trackLock(ctx, "db", groups...)
		create(ctx, newOaatType(typeName), newLock("db", 2))
		for _, name := range groups {
			create(ctx, lockedGroup(name, []string{"db"}, "a", "b", "c"))
		}
		finished := map[string]bool{}
		for len(finished) < 12 {
			var live []corev1.Pod
			Eventually(func(g Gomega) {
				live = liveOf(ctx, g, groups...)
				g.Expect(live).NotTo(BeEmpty(), "no live pod after %d finished runs", len(finished))
			}).WithContext(ctx).Should(Succeed())
			Expect(len(live)).To(BeNumerically("<=", 2), "live pods %v", podNames(live))
			for _, pod := range live {
				finishPod(ctx, pod.Name, 0, "Completed")
				finished[pod.Name] = true
			}
			if len(finished) >= 6 && len(finished) < 6+len(live) {
				By("restarting the operator half-way")
				restartManager()
			}
		}
		By("leaving no slot held and no group waiting once every item has run")
		Eventually(func(g Gomega) {
			lock := getLock(ctx, g, "db")
			g.Expect(lock.Status.Holders).To(BeEmpty())
			g.Expect(lock.Status.WaitingGroups).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
		expectLiveAcross(ctx, 0, time.Second, groups...)
		Expect(db.MaxLive(ns, "db")).To(Equal(2), "pods of the groups sharing db:\n%s", db.Describe(ns))
	}, SpecTimeout(2*specTimeout))

	It("holds the lock for the run and releases it once the run's outcome is recorded", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newLock("nas", 1), lockedGroup("solo", []string{"nas"}, "a"))
		pod := waitForLivePod(ctx, "solo")
		Eventually(func(g Gomega) {
			lock := getLock(ctx, g, "nas")
			g.Expect(lock.Status.Holders).To(HaveLen(1))
			h := lock.Status.Holders[0]
			group := getGroup(ctx, g, "solo")
			g.Expect(h.Group).To(Equal("solo"))
			g.Expect(h.GroupUID).To(Equal(string(group.UID)))
			g.Expect(h.Item).To(Equal("a"))
			g.Expect(h.Pod).To(Equal(pod.Name))
			g.Expect(group.Status.CurrentRun.PodName).To(Equal(pod.Name))
			g.Expect(pod.CreationTimestamp.Time).NotTo(BeTemporally("<", h.Since.Time))
		}).WithContext(ctx).Should(Succeed())

		finishPod(ctx, pod.Name, 0, "Completed")
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "solo")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(itemStatus(group, "a").LastSuccess).NotTo(BeNil())
			lock := getLock(ctx, g, "nas")
			g.Expect(lock.Status.Holders).To(BeEmpty())
			g.Expect(lock.Status.HolderCount).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
	})

	It("is not Ready while a lock it names is missing, and starts once the lock exists", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), lockedGroup("early", []string{"later"}, "a"))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "early")
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonLockNotFound)
			g.Expect(condition(group, v1alpha1.ConditionReady).Message).To(ContainSubstring(`OaatLock "later"`))
		}).WithContext(ctx).Should(Succeed())
		expectNoLivePod(ctx, "early", time.Second)
		create(ctx, newLock("later", 1))
		pod := waitForLivePod(ctx, "early")
		Eventually(func(g Gomega) {
			g.Expect(holderPods(getLock(ctx, g, "later"))).To(ConsistOf(pod.Name))
		}).WithContext(ctx).Should(Succeed())
	})

	It("releases the slots left by a crash: a run never started, a deleted group, a pod gone while the operator was away", func(ctx SpecContext) {
		create(ctx, newOaatType(typeName), newLock("nas", 2), lockedGroup("vanishing", []string{"nas"}, "a"))
		idle := lockedGroup("idle", []string{"nas"}, "a")
		idle.Spec.Suspend = true
		create(ctx, idle)
		lost := waitForLivePod(ctx, "vanishing")
		markRunning(ctx, lost.Name)
		Eventually(func(g Gomega) {
			g.Expect(holderPods(getLock(ctx, g, "nas"))).To(ConsistOf(lost.Name))
		}).WithContext(ctx).Should(Succeed())

		By("stopping the operator; its pod vanishes, and slots are left as a crash leaves them")
		stopManager()
		Expect(k8sClient.Delete(ctx, lost, client.GracePeriodSeconds(0))).To(Succeed())
		untrackPod(ctx, lost.Name) // as an administrator clearing the finalizer would
		idleUID := string(getGroup(ctx, Default, "idle").UID)
		lock := getLock(ctx, Default, "nas")
		since := metav1.NewTime(time.Now().Truncate(time.Second))
		lock.Status.Holders = append(lock.Status.Holders,
			// taken for a run whose intent was never written: the group records no such run
			v1alpha1.LockHolder{Group: "idle", GroupUID: idleUID, Item: "a", Pod: "idle-never-started", Since: since},
			// of a group deleted while the operator was away
			v1alpha1.LockHolder{Group: "ghost", GroupUID: "ghost-uid", Item: "x", Pod: "ghost-x-1", Since: since})
		Expect(k8sClient.Status().Update(ctx, lock)).To(Succeed())

		By("releasing every stale slot on the next pass; the vanished run is recorded and its item runs again")
		stopManager = startManager()
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "vanishing")
			g.Expect(itemStatus(group, "a").LastReason).To(Equal(string(v1alpha1.ReasonPodNotFound)))
			lock := getLock(ctx, g, "nas")
			g.Expect(holderPods(lock)).NotTo(ContainElements("idle-never-started", "ghost-x-1", lost.Name))
			for _, h := range lock.Status.Holders {
				g.Expect(h.Group).To(Equal("vanishing"))
				g.Expect(group.Status.CurrentRun).NotTo(BeNil())
				g.Expect(h.Pod).To(Equal(group.Status.CurrentRun.PodName))
			}
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Admission of OaatLocks and spec.locks", func() {
	It("rejects a group naming more than four locks, or a lock that cannot be a name", func(ctx SpecContext) {
		expectRejected(ctx, lockedGroup("five", []string{"a", "b", "c", "d", "e"}, "x"), "spec.locks: Too many: 5: must have at most 4 items")
		expectRejected(ctx, lockedGroup("badname", []string{"Not_A_Name"}, "x"), `spec.locks[0]: Invalid value: "Not_A_Name"`)
		expectRejected(ctx, lockedGroup("twice", []string{"a", "a"}, "x"), `spec.locks[1]: Duplicate value: "a"`)
		Expect(k8sClient.Create(ctx, lockedGroup("four", []string{"a", "b", "c", "d"}, "x"))).To(Succeed())
	}, SpecTimeout(specTimeout))

	It("rejects a capacity below 1 and defaults it to 1", func(ctx SpecContext) {
		zero := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1alpha1.GroupVersion.String(), "kind": "OaatLock",
			"metadata": map[string]any{"name": "zero", "namespace": ns},
			"spec":     map[string]any{"capacity": int64(0)},
		}}
		expectRejected(ctx, zero, "spec.capacity: Invalid value: 0")
		Expect(k8sClient.Create(ctx, newLock("defaulted", 0))).To(Succeed())
		Expect(getLock(ctx, Default, "defaulted").Spec.Capacity).To(Equal(int32(1)))
	}, SpecTimeout(specTimeout))
})
