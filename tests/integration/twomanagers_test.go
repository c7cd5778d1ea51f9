package integration

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// lockVersion is one version of a ClusterOaatLock as its watch showed it.
type lockVersion struct {
	resourceVersion string
	holders         int
	waiting         int32
}

// lockRecorder records every change of one ClusterOaatLock that its watch shows: with a spec that
// nobody edits, each is one write of its status.
type lockRecorder struct {
	watch *support.Watch

	mu       sync.Mutex
	versions []lockVersion
}

// clusterLockWatcher watches one ClusterOaatLock, for a RetryWatcher.
type clusterLockWatcher struct {
	c    client.WithWatch
	name string
}

// WatchWithContext starts a watch of the lock with the options of the RetryWatcher.
func (w clusterLockWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	options.FieldSelector = fields.OneTermEqualSelector("metadata.name", w.name).String()
	return w.c.Watch(ctx, &v1alpha1.ClusterOaatLockList{}, &client.ListOptions{Raw: &options})
}

// recordClusterLock records the changes of the lock from its version lock.ResourceVersion on,
// until the test ends.
func recordClusterLock(ctx context.Context, lock *v1alpha1.ClusterOaatLock) *lockRecorder {
	GinkgoHelper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	r := &lockRecorder{}
	r.watch, err = support.Follow(ctx, lock.ResourceVersion, clusterLockWatcher{c: c, name: lock.Name},
		"watch of ClusterOaatLock "+lock.Name, func(ev watch.Event) error {
			switch ev.Type {
			case watch.Error:
				return fmt.Errorf("ClusterOaatLock watch error: %v", ev.Object)
			case watch.Modified:
				l, ok := ev.Object.(*v1alpha1.ClusterOaatLock)
				if !ok {
					return fmt.Errorf("ClusterOaatLock watch: unexpected %T", ev.Object)
				}
				r.mu.Lock()
				defer r.mu.Unlock()
				r.versions = append(r.versions, lockVersion{
					resourceVersion: l.ResourceVersion, holders: len(l.Status.Holders), waiting: l.Status.WaitingGroups})
			case watch.Added, watch.Deleted, watch.Bookmark:
				// The watch starts after the lock's creation; it is deleted after the watch stops.
			}
			return nil
		})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		Expect(r.watch.Stop()).To(Succeed(), "the watch of the cluster lock did not see every change")
	})
	return r
}

// seen returns the versions recorded so far.
func (r *lockRecorder) seen() []lockVersion {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]lockVersion(nil), r.versions...)
}

// writes counts the versions recorded so far: one per write that changed the lock.
func (r *lockRecorder) writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.versions)
}

// describeVersions lists the first versions compactly for a report: holders/waitingGroups.
func describeVersions(versions []lockVersion) string {
	const most = 40
	parts := make([]string, 0, min(len(versions), most)+1)
	for _, v := range versions[:min(len(versions), most)] {
		parts = append(parts, fmt.Sprintf("%d/%d", v.holders, v.waiting))
	}
	if len(versions) > most {
		parts = append(parts, fmt.Sprintf("… (%d more)", len(versions)-most))
	}
	return strings.Join(parts, " ")
}

// kubelet plays the kubelet for the pods of the group backups in the namespaces: it makes each
// new pod Running and, once it has been live for holdFor, ends it successfully. It counts the pods
// it ended per namespace, and the order in which the runs started, one letter per run: the
// namespace's index, a for the first.
type kubelet struct {
	namespaces []string
	holdFor    time.Duration

	seen  map[types.UID]time.Time
	ended map[string]int
	order []byte
}

// step does what is due for the live pods now.
func (k *kubelet) step(ctx context.Context) {
	GinkgoHelper()
	for i, namespace := range k.namespaces {
		inNamespace(namespace, func() {
			live, err := livePodsOf(ctx, "backups")
			Expect(err).NotTo(HaveOccurred())
			for _, pod := range live {
				first, ok := k.seen[pod.UID]
				switch {
				case !ok:
					k.seen[pod.UID] = time.Now()
					k.order = append(k.order, byte('a'+i))
					markRunning(ctx, pod.Name)
				case time.Since(first) >= k.holdFor:
					finishPod(ctx, pod.Name, 0, "Completed")
					k.ended[namespace]++
				}
			}
		})
	}
}

// handOffs counts the runs that started in another namespace than the run before.
func (k *kubelet) handOffs() int {
	n := 0
	for i := 1; i < len(k.order); i++ {
		if k.order[i] != k.order[i-1] {
			n++
		}
	}
	return n
}

// runs is how many pods the kubelet ended.
func (k *kubelet) runs() int {
	n := 0
	for _, e := range k.ended {
		n += e
	}
	return n
}

// allRan reports whether every item of the group backups of each namespace has succeeded.
func allRan(ctx context.Context, namespaces, items []string) bool {
	GinkgoHelper()
	for _, namespace := range namespaces {
		done := true
		inNamespace(namespace, func() {
			group := getGroup(ctx, Default, "backups")
			for _, item := range items {
				if st := itemStatus(group, item); st == nil || st.LastSuccess == nil {
					done = false
				}
			}
		})
		if !done {
			return false
		}
	}
	return true
}

// Two installations of the operator in OwnNamespace or SingleNamespace mode, each watching its own
// namespace, sharing one ClusterOaatLock (docs/locks.md): the lock's capacity holds across both,
// neither writes status.waitingGroups, which it cannot count (issue 25, defect 7: each wrote the
// count of the waiters it sees over the other's, 1, 0, 1, 0, each write waking the other and every
// group naming the lock, without end), and their groups take turns through their claims.
var _ = Describe("Two managers of some namespaces sharing a ClusterOaatLock", func() {
	// One group per namespace: while one group's run holds the slot, the other group waits, so
	// that one installation sees one waiter and the other none, the counts that flapped. Every run
	// lives holdFor: the 16 runs take some 20 s. Each installation writes its claim on the lock
	// (status.installationClaims) while its group waits, and counts the other's: a group that has
	// run an item gives the slot to the other installation's group that has waited longer, instead
	// of keeping it from item to item, so the runs alternate between the namespaces.
	const holdFor = time.Second
	items := []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"}
	// A run costs at most four writes of the lock's status: its group takes the slot (holders
	// lists the run) and gives it back (holders no longer does), and its installation's claim
	// appears when the group begins to wait and goes when it takes the slot. slack allows for a
	// write of the holders that the group's reconcile repeats (assertHolders).
	const writesPerRun, slack = 4, 2

	It("runs the groups of both installations in turn, one pod at a time, without a storm of lock status writes", func(ctx SpecContext) {
		labelNamespace(ctx, ns, "backup")
		second := sharingNamespace(ctx, "backup")
		namespaces := []string{ns, second}
		// Two installations, each of one namespace, as OLM runs them in OwnNamespace or
		// SingleNamespace mode, and no installation of all namespaces: nothing may write
		// status.waitingGroups.
		stopManager()
		// The new lock's adoption window (adoption_test.go) is cut short: this spec is about the
		// turns the installations take, not about a re-create.
		stopFirst := startManagerWith(managerOptions{namespaces: []string{ns}, adoptionWindow: time.Second})
		stopSecond := startManagerWith(managerOptions{namespaces: []string{second}, adoptionWindow: time.Second})
		stopManager = func() {
			stopFirst()
			stopSecond()
		}

		lock := newClusterLock(ctx, 1)
		recorder := recordClusterLock(ctx, lock)
		tracker := support.NewClusterLockTracker(lock.Name, []support.GroupKey{
			{Namespace: ns, Group: "backups"}, {Namespace: second, Group: "backups"}}, labelTestPod)
		lockPods, err := support.WatchPods(ctx, clientset, "", tracker)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			Expect(lockPods.Stop()).To(Succeed(), "the watch of the cluster lock's pods did not see every pod event")
		})
		for _, namespace := range namespaces {
			clusterLockedGroup(ctx, namespace, lock.Name, items...)
		}

		k := &kubelet{namespaces: namespaces, holdFor: holdFor, seen: map[types.UID]time.Time{}, ended: map[string]int{}}
		start := time.Now()
		var took time.Duration
		summary := func() string {
			versions := recorder.seen()
			return fmt.Sprintf("%d runs started, %d ended (per namespace %v, order %s, %d hand-offs between them) in %s; %d lock status writes "+
				"(%.2f per run started); max live pods of the lock %d; versions (holders/waitingGroups): %s",
				len(k.seen), k.runs(), k.ended, k.order, k.handOffs(), cmp.Or(took, time.Since(start)).Round(100*time.Millisecond),
				len(versions), float64(len(versions))/float64(max(len(k.seen), 1)), tracker.MaxLive("", lock.Name),
				describeVersions(versions))
		}

		By("playing the kubelet until every item of both groups has run, the lock's writes bounded by the runs all along")
		for !allRan(ctx, namespaces, items) {
			Expect(time.Since(start)).To(BeNumerically("<", 90*time.Second), func() string { return "not every item ran: " + summary() })
			// A run's take of the slot comes before its pod: one more than the pods seen so far.
			Expect(recorder.writes()).To(BeNumerically("<=", writesPerRun*(len(k.seen)+1)+slack),
				func() string { return "a storm of lock status writes: " + summary() })
			k.step(ctx)
			select {
			case <-ctx.Done():
				Fail("the spec timed out: " + summary())
			case <-time.After(interval):
			}
		}
		took = time.Since(start)

		By("with every item run, nothing writes the lock any more")
		Eventually(func(g Gomega) {
			g.Expect(getClusterLock(ctx, g, lock.Name).Status.Holders).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		quiet := recorder.writes()
		Consistently(recorder.writes).WithContext(ctx).WithTimeout(3*time.Second).Should(Equal(quiet),
			func() string { return "the lock was written with nothing to run: " + summary() })

		report := summary()
		AddReportEntry("two managers sharing a ClusterOaatLock", report)
		Expect(tracker.Overlaps()).To(BeEmpty(), "pods of the groups sharing the lock coexisted: %s", report)
		Expect(tracker.MaxLive("", lock.Name)).To(Equal(1), report)
		Expect(k.ended).To(Equal(map[string]int{ns: len(items), second: len(items)}), "runs per namespace: %s", report)
		// Keeping the slot from item to item, one group ran all its items, then the other: one
		// hand-off. Alternating, nearly every run hands it over.
		Expect(k.handOffs()).To(BeNumerically(">=", len(items)), "the groups did not take turns: %s", report)
		Expect(recorder.writes()).To(BeNumerically("<=", writesPerRun*k.runs()+slack), "a storm of lock status writes: %s", report)
		for _, v := range recorder.seen() {
			Expect(v.holders).To(BeNumerically("<=", 1), "more holders than the capacity: %s", report)
			Expect(v.waiting).To(BeZero(),
				"an installation of some namespaces wrote status.waitingGroups (version %s): %s", v.resourceVersion, report)
		}
	}, SpecTimeout(2*time.Minute))
})
