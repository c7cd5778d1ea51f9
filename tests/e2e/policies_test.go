//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// queueWatch is what the queue-policies spec saw of the lock and the groups' requests, polled
// while the groups ran.
type queueWatch struct {
	// inForce are the capacities in force the lock's status showed, with the first time each was
	// seen.
	inForce map[int32]time.Time
	// mostPassed is the highest count of status.passedOver seen; passed how many polls saw an
	// entry.
	mostPassed int32
	passed     int
	// requests are the requests seen (status.lockWait), by group and since.
	requests map[string][]time.Time
	// promoted counts the polls that saw a promoted request.
	promoted int
}

// watchQueue polls the lock repo and the groups of the test's namespace every 250 ms until the
// deadline.
func watchQueue(ctx context.Context, until time.Time) *queueWatch {
	w := &queueWatch{inForce: map[int32]time.Time{}, requests: map[string][]time.Time{}}
	for time.Now().Before(until) {
		lock := &v1alpha1.OaatLock{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "repo"}, lock); err == nil {
			if c := lock.Status.CapacityInForce; c != nil {
				if _, ok := w.inForce[*c]; !ok {
					w.inForce[*c] = time.Now()
				}
			}
			for _, p := range lock.Status.PassedOver {
				w.mostPassed = max(w.mostPassed, p.Count)
			}
			if len(lock.Status.PassedOver) > 0 {
				w.passed++
			}
		}
		groups := &v1alpha1.OaatGroupList{}
		if err := k8sClient.List(ctx, groups, client.InNamespace(ns)); err == nil {
			for _, g := range groups.Items {
				if wait := g.Status.LockWait; wait != nil {
					if !slices.ContainsFunc(w.requests[g.Name], wait.Since.Time.Equal) {
						w.requests[g.Name] = append(w.requests[g.Name], wait.Since.Time)
					}
					if wait.PromotedAt != nil {
						w.promoted++
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return w
		case <-time.After(250 * time.Millisecond):
		}
	}
	return w
}

// nextMinuteAfter is the first whole minute (UTC) at least d after now.
func nextMinuteAfter(now time.Time, d time.Duration) time.Time {
	return now.Add(d).UTC().Truncate(time.Minute).Add(time.Minute)
}

var _ = Describe("Queue and lock policies together", func() {
	It("keeps a lock of 2 slots by day and 4 by night to its slots with weights, an exclusive prune alone, a high priority within its bound, and parks an item after 3 failures", SpecTimeout(4*time.Minute), func(ctx SpecContext) {
		// The day window of 2 slots ends at the first whole minute at least 20 s ahead; the
		// night (spec.capacity) gives 4.
		night := nextMinuteAfter(time.Now(), 20*time.Second)
		lock := support.Lock(ns, "repo", 4)
		lock.Spec.CapacitySchedule = []v1alpha1.CapacityWindow{{
			Start: night.Add(-time.Hour).Format("15:04"), End: night.Format("15:04"), Capacity: ptr.To[int32](2)}}
		lock.Spec.ExclusiveHolders, lock.Spec.MaxSlotsPerRun, lock.Spec.MaxPriority = v1alpha1.ExclusiveAllowed, 2, ptr.To[int32](5)
		weight := map[string]int{"heavy": 2, "light": 1, "urgent": 1, "flaky": 1}
		group := func(name, oaatType string, items ...string) *v1alpha1.OaatGroup {
			return support.Group(ns, name, oaatType, items...).Frequency("10s").Locks("repo").Obj()
		}
		heavy, light, urgent := group("heavy", "work", "h1", "h2", "h3"), group("light", "work", "l1", "l2", "l3"), group("urgent", "work", "u1", "u2")
		heavy.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "repo", Slots: 2}}
		urgent.Spec.Priority = ptr.To[int32](9)
		prune := group("prune", "work", "p1")
		prune.Spec.LockOptions = []v1alpha1.LockOption{{Lock: "repo", Mode: v1alpha1.LockExclusive}}
		flaky := group("flaky", "broken", "f1")
		flaky.Spec.MaxConsecutiveFailures = 3
		names := []string{"heavy", "light", "urgent", "prune", "flaky"}
		repo := support.NewLockTracker("repo", names, labelTestPod)
		watch, err := support.WatchPods(ctx, clientset, ns, repo)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(watch.Stop()).To(Succeed(), "the watch of the lock did not see every pod event")
		})
		create(ctx, newOaatType("work", "3s", 0), newOaatType("broken", "1s", 1), lock, heavy, light, urgent, prune, flaky)

		By(fmt.Sprintf("running the groups through the day window and %s of the night (from %s)", 15*time.Second, night.Format(time.TimeOnly)))
		seen := watchQueue(ctx, night.Add(15*time.Second))
		Expect(seen.inForce).To(HaveKey(BeEquivalentTo(2)), "the lock's status never showed the day's capacity")
		Expect(seen.inForce).To(HaveKey(BeEquivalentTo(4)), "the lock's status never showed the night's capacity")

		podGroup := map[string]string{}
		for _, name := range names {
			for _, p := range tracker.PodsOf(ns, name) {
				podGroup[p.Name] = name
			}
		}
		slots := func(pods []string) int {
			n := 0
			for _, p := range pods {
				n += weight[podGroup[p]]
			}
			return n
		}

		By("never holding more slots than the capacity in force, nor anything beside the prune")
		var excess []string
		mostDay, mostNight := 0, 0
		for _, o := range repo.OverlapsIn(ns) {
			capacity, used := 2, slots(o.Pods)
			if !o.At.Before(night) {
				capacity, mostNight = 4, max(mostNight, used)
			} else {
				mostDay = max(mostDay, used)
			}
			if slices.ContainsFunc(o.Pods, func(p string) bool { return podGroup[p] == "prune" }) {
				excess = append(excess, fmt.Sprintf("%s: the prune beside %v", o.At.Format(time.RFC3339Nano), o.Pods))
			} else if used > capacity {
				excess = append(excess, fmt.Sprintf("%s: %d slots of %d in force: %v", o.At.Format(time.RFC3339Nano), used, capacity, o.Pods))
			}
		}
		Expect(excess).To(BeEmpty(), "moments over the lock's capacity in force or beside its exclusive holder:\n%s", repo.Describe(ns))
		GinkgoWriter.Printf("most slots held at once: %d by day (capacity 2), %d by night (capacity 4)\n", mostDay, mostNight)
		Expect(mostNight).To(BeNumerically(">", 2), "the night's capacity of 4 was never used beyond 2 slots")
		for _, name := range []string{"heavy", "light", "urgent", "prune"} {
			Expect(tracker.PodsOf(ns, name)).NotTo(BeEmpty(), "group %s never ran", name)
		}

		By("passing a shared request over by at most one exclusive hold (one exclusive waiter before it)")
		prunes := tracker.PodsOf(ns, "prune")
		checked := 0
		for name, sinces := range seen.requests {
			if name == "prune" {
				continue
			}
			pods := tracker.PodsOf(ns, name)
			for _, since := range sinces {
				i := slices.IndexFunc(pods, func(p support.PodRecord) bool { return !p.Created.Time.Before(since) })
				if i < 0 {
					continue // still waiting at the end
				}
				checked++
				var during []string
				for _, p := range prunes {
					if p.Created.After(since) && p.Created.Before(&pods[i].Created) {
						during = append(during, p.Name)
					}
				}
				Expect(len(during)).To(BeNumerically("<=", 1), "the request of %s waiting since %s was passed over by the exclusive holds %v",
					name, since.Format(time.RFC3339), during)
			}
		}
		GinkgoWriter.Printf("shared requests checked against the exclusive bound: %d\n", checked)
		Expect(checked).To(BeNumerically(">", 0))

		By("passing a request over for priority at most PassLimit times")
		GinkgoWriter.Printf("polls with a request passed over: %d, the most passes of one request: %d; polls with a promoted request: %d\n",
			seen.passed, seen.mostPassed, seen.promoted)
		Expect(seen.passed).To(BeNumerically(">", 0), "urgent, of priority 9 honoured as 5, never passed a request over")
		Expect(seen.mostPassed).To(BeNumerically("<=", v1alpha1.PassLimit))

		By("parking flaky's item after 3 failures in a row")
		Eventually(func(g Gomega) {
			it := itemOf(g, getGroup(ctx, g, "flaky"), "f1")
			g.Expect(it.ParkedGeneration).NotTo(BeZero())
			g.Expect(it.FailureCount).To(BeEquivalentTo(3))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(tracker.PodsOf(ns, "flaky")).To(HaveLen(3), "flaky's pods: %s", strings.Join(podNamesOf(tracker.PodsOf(ns, "flaky")), ", "))
	})
})

// podNamesOf are the names of the pods recorded.
func podNamesOf(recs []support.PodRecord) []string {
	names := make([]string, 0, len(recs))
	for _, r := range recs {
		names = append(names, r.Name)
	}
	return names
}
