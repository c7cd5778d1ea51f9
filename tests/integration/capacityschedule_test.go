package integration

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// windowAround is a window of spec.capacitySchedule of the capacity, open from an hour before now
// to an hour after it (UTC, to the minute), and when it closes.
func windowAround(capacity int32) (v1alpha1.CapacityWindow, time.Time) {
	now := time.Now().UTC().Truncate(time.Minute)
	end := now.Add(time.Hour)
	return v1alpha1.CapacityWindow{Start: now.Add(-time.Hour).Format("15:04"), End: end.Format("15:04"), Capacity: ptr.To(capacity)}, end
}

var _ = Describe("A lock's capacity schedule", func() {
	It("starts nothing in a window of 0 slots, says so in the lock's status, and lets the groups run once the window is edited to 1 slot", func(ctx SpecContext) {
		groups := []string{"s1", "s2"}
		nas := trackLock(ctx, "nas", groups...)
		lock := newLock("nas", 2)
		closed, end := windowAround(0)
		lock.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{closed}
		create(ctx, newOaatType(typeName), lock, lockedGroup("s1", []string{"nas"}, "a"), lockedGroup("s2", []string{"nas"}, "a"))

		By("holding both groups, the lock's status naming the capacity in force and the window's end")
		expectWaiting(ctx, "s1", "nas")
		expectWaiting(ctx, "s2", "nas")
		Eventually(func(g Gomega) {
			st := getLock(ctx, g, "nas").Status
			g.Expect(st.CapacityInForce).To(HaveValue(BeEquivalentTo(0)))
			g.Expect(st.NextCapacityChange).NotTo(BeNil())
			g.Expect(st.NextCapacityChange.At.Time).To(BeTemporally("==", end))
			g.Expect(st.NextCapacityChange.Capacity).To(HaveValue(BeEquivalentTo(2)))
			g.Expect(st.WaitingGroups).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())
		expectLiveAcross(ctx, 0, 2*time.Second, groups...)

		By("running one group at a time once the window gives 1 slot")
		open, _ := windowAround(1)
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			l := getLock(ctx, Default, "nas")
			l.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{open}
			return k8sClient.Update(ctx, l)
		})).To(Succeed(), "the lock's reconciler writes its status meanwhile")
		first := liveAcross(ctx, 1, groups...)[0]
		expectLiveAcross(ctx, 1, time.Second, groups...)
		Eventually(func(g Gomega) {
			g.Expect(getLock(ctx, g, "nas").Status.CapacityInForce).To(HaveValue(BeEquivalentTo(1)))
		}).WithContext(ctx).Should(Succeed())
		finishPod(ctx, first.Name, 0, "Completed")
		second := liveAcross(ctx, 1, groups...)[0]
		Expect(second.Labels[v1alpha1.LabelGroup]).NotTo(Equal(first.Labels[v1alpha1.LabelGroup]))
		finishPod(ctx, second.Name, 0, "Completed")
		Expect(nas.MaxLive(ns, "nas")).To(Equal(1), "pods of the groups sharing the lock:\n%s", nas.Describe(ns))
	})
})

var _ = Describe("Admission of spec.capacitySchedule", func() {
	It("rejects an empty window, a negative capacity, a window without one, an unknown zone and more than 16 windows, and accepts the documented lock", func(ctx SpecContext) {
		withWindows := func(name string, windows ...v1alpha1.CapacityWindow) *v1alpha1.OaatLock {
			l := newLock(name, 1)
			l.Spec.CapacitySchedule = windows
			return l
		}
		expectRejected(ctx, withWindows("empty", v1alpha1.CapacityWindow{Start: "03:00", End: "03:00", Capacity: ptr.To[int32](1)}),
			"a capacity window from 03:00 to 03:00 is empty: end must differ from start")
		expectRejected(ctx, withWindows("negative", v1alpha1.CapacityWindow{Start: "01:00", End: "02:00", Capacity: ptr.To[int32](-1)}),
			"spec.capacitySchedule[0].capacity: Invalid value: -1")
		expectRejected(ctx, withWindows("none", v1alpha1.CapacityWindow{Start: "01:00", End: "02:00"}),
			"spec.capacitySchedule[0].capacity: Required value")
		expectRejected(ctx, withWindows("zone", v1alpha1.CapacityWindow{Start: "01:00", End: "02:00", TimeZone: "Mars/Olympus", Capacity: ptr.To[int32](1)}),
			`unknown time zone "Mars/Olympus"`)
		many := make([]v1alpha1.CapacityWindow, 17)
		for i := range many {
			many[i] = v1alpha1.CapacityWindow{Start: "01:00", End: "02:00", Capacity: ptr.To[int32](1)}
		}
		expectRejected(ctx, withWindows("many", many...), "spec.capacitySchedule: Too many: 17: must have at most 16 items")

		By("accepting the lock of docs/locks.md")
		blocks, err := support.CheckedBlocks("../..", "tests/integration", "capacity-schedule")
		Expect(err).NotTo(HaveOccurred())
		Expect(blocks).To(HaveLen(1))
		documented := &v1alpha1.OaatLock{}
		Expect(yaml.UnmarshalStrict([]byte(blocks[0].Text), documented)).To(Succeed(), blocks[0].Where())
		Expect(documented.Spec.CapacitySchedule).To(HaveLen(2), blocks[0].Where())
		documented.Namespace = ns
		Expect(k8sClient.Create(ctx, documented)).To(Succeed(), blocks[0].Where())
	}, SpecTimeout(specTimeout))
})

// optioned is a group of the items naming nas, taking it as the option says.
func optioned(name string, mode v1alpha1.LockMode, slots int32, items ...string) *v1alpha1.OaatGroup {
	g := lockedGroup(name, []string{"nas"}, items...)
	g.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "nas", Mode: mode, Slots: slots}}
	return g
}

var _ = Describe("Exclusive and weighted lock holders", func() {
	It("counts a run of 2 slots as two, runs an exclusive group alone once the holders drain, and refuses what the lock does not allow", func(ctx SpecContext) {
		all := []string{"heavy", "light", "prune"}
		nas := trackLock(ctx, "nas", all...)
		lock := newLock("nas", 2)
		lock.Spec.ExclusiveHolders, lock.Spec.MaxSlotsPerRun = v1alpha1.ExclusiveAllowed, 2
		create(ctx, newOaatType(typeName), lock, optioned("heavy", v1alpha1.LockShared, 2, "a"))
		heavy := liveAcross(ctx, 1, all...)[0]
		Eventually(func(g Gomega) {
			l := getLock(ctx, g, "nas")
			g.Expect(l.Status.Holders).To(HaveLen(1))
			g.Expect(l.Status.Holders[0].Slots).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())

		By("holding a one-slot group while the two slots are taken")
		create(ctx, lockedGroup("light", []string{"nas"}, "a"))
		expectWaiting(ctx, "light", "nas")
		expectLiveAcross(ctx, 1, time.Second, all...)

		By("an exclusive group waiting behind it: granted only once the lock is empty, alone")
		create(ctx, optioned("prune", v1alpha1.LockExclusive, 0, "a"))
		expectWaiting(ctx, "prune", "nas")
		finishPod(ctx, heavy.Name, 0, "Completed")
		light := waitForLivePod(ctx, "light")
		expectLiveAcross(ctx, 1, time.Second, all...)
		finishPod(ctx, light.Name, 0, "Completed")
		prune := waitForLivePod(ctx, "prune")
		Eventually(func(g Gomega) {
			l := getLock(ctx, g, "nas")
			g.Expect(l.Status.Holders).To(HaveLen(1))
			g.Expect(l.Status.Holders[0].Mode).To(Equal(v1alpha1.LockExclusive))
		}).WithContext(ctx).Should(Succeed())
		expectLiveAcross(ctx, 1, time.Second, all...)
		finishPod(ctx, prune.Name, 0, "Completed")
		Expect(nas.MaxLive(ns, "nas")).To(Equal(1), "pods of the groups sharing the lock:\n%s", nas.Describe(ns))

		By("refusing a group that asks more slots than the lock allows per run")
		create(ctx, optioned("greedy", v1alpha1.LockShared, 3, "a"))
		Eventually(func(g Gomega) {
			greedy := getGroup(ctx, g, "greedy")
			expectCondition(g, greedy, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonLockOptionRefused)
			g.Expect(condition(greedy, v1alpha1.ConditionReady).Message).To(Equal("spec.lockOptions: OaatLock nas allows at most 2 slot(s) per run (its spec.maxSlotsPerRun); asked 3"))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("Admission of spec.lockOptions", func() {
	It("rejects an option for a lock the group does not name, and slots on an exclusive option", func(ctx SpecContext) {
		unnamed := optioned("unnamed", v1alpha1.LockShared, 1, "a")
		unnamed.Spec.LockOptions[0].Lock = "db"
		expectRejected(ctx, unnamed, "spec.lockOptions: each entry's lock must be a lock of spec.locks, or ClusterOaatLock/NAME for a lock of spec.clusterLocks")
		expectRejected(ctx, optioned("both", v1alpha1.LockExclusive, 2, "a"), "an Exclusive lock option takes the whole lock: slots applies to mode Shared only")
		cluster := support.Group(ns, "clustered", typeName, "a").Obj()
		cluster.Spec.ClusterLocks = []string{"shared"}
		cluster.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "ClusterOaatLock/shared", Mode: v1alpha1.LockExclusive}}
		Expect(k8sClient.Create(ctx, cluster)).To(Succeed())
	}, SpecTimeout(specTimeout))
})
