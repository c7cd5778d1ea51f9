package support

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Upgrade is the work an upgrade spec keeps going across an upgrade of the operator, by any path
// (the catalog, install.yaml, Helm), and the checks of what the upgrade kept. In Namespace: a
// type "work" whose pods run RunFor (so that the work spans the upgrade) and groups of several
// kinds: steady (frequency, three items), eachonce (mode EachOnce), blackout (in a blackout
// window around now: it must wait, with its status kept); an OaatRun "pending" for steady's last
// item, waiting behind its first run; after the upgrade, an OaatRun "after-upgrade".
type Upgrade struct {
	Client    client.Client
	Namespace string
	RunFor    time.Duration
}

// upgradeGroupsThatRun are the workload's groups that run items.
var upgradeGroupsThatRun = []string{"steady", "eachonce"}

// Create creates the workload, as the previous release's operator runs: the type and the groups,
// then, once steady runs an item, the OaatRun "pending".
func (u Upgrade) Create(ctx context.Context) {
	ginkgo.GinkgoHelper()
	// Spelled out rather than built (Type, Group): the previous release's CRDs must take them.
	script := fmt.Sprintf(`sleep %d; echo "done $OAAT_ITEM"`, int(u.RunFor.Seconds()))
	ot := &v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "work", Namespace: u.Namespace},
		Spec: v1alpha1.OaatTypeSpec{
			Type: v1alpha1.OaatTypePod,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sh", "-c", script}}},
			}},
		},
	}
	now := time.Now().UTC()
	groups := []*v1alpha1.OaatGroup{
		{ObjectMeta: metav1.ObjectMeta{Name: "steady", Namespace: u.Namespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"a", "b", "c"}, Frequency: "1h"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eachonce", Namespace: u.Namespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"x", "y"}, Mode: v1alpha1.ModeEachOnce}},
		{ObjectMeta: metav1.ObjectMeta{Name: "blackout", Namespace: u.Namespace},
			Spec: v1alpha1.OaatGroupSpec{OaatType: "work", OaatItems: []string{"p"}, Frequency: "1h",
				BlackoutWindows: []v1alpha1.BlackoutWindow{{
					Start: now.Add(-time.Hour).Format("15:04"), End: now.Add(2 * time.Hour).Format("15:04"), TimeZone: "UTC",
				}}}},
	}
	gomega.Expect(u.Client.Create(ctx, ot)).To(gomega.Succeed())
	for _, g := range groups {
		gomega.Expect(u.Client.Create(ctx, g)).To(gomega.Succeed(), "creating OaatGroup %s", g.Name)
	}
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(u.Group(ctx, g, "steady").Status.CurrentRun).NotTo(gomega.BeNil())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(gomega.Succeed())
	u.CreateRun(ctx, "pending", "c")
}

// CreateRun creates an OaatRun of steady's item.
func (u Upgrade) CreateRun(ctx context.Context, name, item string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(u.Client.Create(ctx, &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: u.Namespace},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: "steady", Item: item},
	})).To(gomega.Succeed(), "creating OaatRun %s", name)
}

// Started checks that the work is under way: steady runs an item and the OaatRun "pending" waits.
func (u Upgrade) Started(ctx context.Context, g gomega.Gomega) {
	g.Expect(u.Group(ctx, g, "steady").Status.CurrentRun).NotTo(gomega.BeNil(), "steady runs an item")
	g.Expect(u.Run(ctx, g, "pending").Status.Phase).To(gomega.Equal(v1alpha1.OaatRunPending), "the OaatRun waits for the running item")
}

// Done checks that every due item has run and both OaatRuns were served.
func (u Upgrade) Done(ctx context.Context, g gomega.Gomega) {
	for _, name := range upgradeGroupsThatRun {
		group := u.Group(ctx, g, name)
		g.Expect(group.Status.CurrentRun).To(gomega.BeNil(), "%s still runs", name)
		g.Expect(ItemsSucceeded(group, group.Spec.OaatItems)).To(gomega.Succeed(), name)
	}
	for _, run := range []string{"pending", "after-upgrade"} {
		g.Expect(u.Run(ctx, g, run).Status.Phase).To(gomega.Equal(v1alpha1.OaatRunSucceeded), "OaatRun %s", run)
	}
}

// Group reads a group of the workload; g is the caller's Gomega.
func (u Upgrade) Group(ctx context.Context, g gomega.Gomega, name string) *v1alpha1.OaatGroup {
	group := &v1alpha1.OaatGroup{}
	g.Expect(u.Client.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: name}, group)).To(gomega.Succeed())
	return group
}

// Run reads an OaatRun of the workload; g is the caller's Gomega.
func (u Upgrade) Run(ctx context.Context, g gomega.Gomega, name string) *v1alpha1.OaatRun {
	run := &v1alpha1.OaatRun{}
	g.Expect(u.Client.Get(ctx, client.ObjectKey{Namespace: u.Namespace, Name: name}, run)).To(gomega.Succeed())
	return run
}

// Statuses returns every item's status of the namespace's groups, by group/item.
func (u Upgrade) Statuses(ctx context.Context) map[string]v1alpha1.ItemStatus {
	ginkgo.GinkgoHelper()
	groups := &v1alpha1.OaatGroupList{}
	gomega.Expect(u.Client.List(ctx, groups, client.InNamespace(u.Namespace))).To(gomega.Succeed())
	out := map[string]v1alpha1.ItemStatus{}
	for _, g := range groups.Items {
		for _, it := range g.Status.Items {
			out[g.Name+"/"+it.Name] = it
		}
	}
	return out
}

// FirstPodSince is the creation time of the first item pod the tracker saw created at or after
// since, zero if none.
func (u Upgrade) FirstPodSince(tracker *OverlapTracker, since time.Time) time.Time {
	var first time.Time
	for _, name := range upgradeGroupsThatRun {
		for _, p := range tracker.PodsOf(u.Namespace, name) {
			if !p.Created.Time.Before(since) && (first.IsZero() || p.Created.Time.Before(first)) {
				first = p.Created.Time
			}
		}
	}
	return first
}

// ExpectKept checks the statuses against those taken before the upgrade: no item lost its entry
// and no recorded time was dropped or went back; and the blackout group ran nothing and still
// says why it waits.
func (u Upgrade) ExpectKept(ctx context.Context, tracker *OverlapTracker, before map[string]v1alpha1.ItemStatus) {
	ginkgo.GinkgoHelper()
	after := u.Statuses(ctx)
	for key, was := range before {
		now, ok := after[key]
		gomega.Expect(ok).To(gomega.BeTrue(), "item %s lost its status entry", key)
		for _, pair := range [][2]*metav1.Time{{was.LastSuccess, now.LastSuccess}, {was.LastFailure, now.LastFailure}, {was.LastStarted, now.LastStarted}} {
			if pair[0] != nil {
				gomega.Expect(pair[1]).NotTo(gomega.BeNil(), "item %s: a recorded time was dropped", key)
				gomega.Expect(pair[1].Before(pair[0])).To(gomega.BeFalse(), "item %s: a recorded time went back", key)
			}
		}
	}
	blackout := u.Group(ctx, gomega.Default, "blackout")
	gomega.Expect(tracker.PodsOf(u.Namespace, "blackout")).To(gomega.BeEmpty(), "the group in its blackout window ran a pod")
	gomega.Expect(blackout.Status.Items).To(gomega.HaveLen(1))
	gomega.Expect(blackout.Status.Items[0].WaitReason).To(gomega.Equal(v1alpha1.WaitBlackout), "the blackout group's item")
}

// ExpectRecordedOnce checks that no run was recorded twice or lost across the managers: each
// item's status names its newest item pod, which has ended; an item of the EachOnce group, whose
// round asks one success of it, has exactly one pod (an outcome lost in the handover would have
// run it again); and no pod has two outcome events (RunSucceeded or RunFailed). Events are best
// effort (a process that stops may not have sent its last ones): pods without one are reported,
// not failed.
func (u Upgrade) ExpectRecordedOnce(ctx context.Context, tracker *OverlapTracker) {
	ginkgo.GinkgoHelper()
	for _, name := range upgradeGroupsThatRun {
		group := u.Group(ctx, gomega.Default, name)
		pods := tracker.PodsOf(u.Namespace, name)
		for _, it := range group.Status.Items {
			var newest *PodRecord
			count := 0
			for i := range pods {
				if pods[i].Item != it.Name {
					continue
				}
				count++
				if newest == nil || pods[i].Created.After(newest.Created.Time) {
					newest = &pods[i]
				}
			}
			gomega.Expect(newest).NotTo(gomega.BeNil(), "no pod of %s/%s", name, it.Name)
			gomega.Expect(newest.Ended.IsZero()).To(gomega.BeFalse(), "the newest pod of %s/%s has not ended", name, it.Name)
			gomega.Expect(it.LastPodName).To(gomega.Equal(newest.Name), "the status of %s/%s names its newest pod", name, it.Name)
			if name == "eachonce" {
				gomega.Expect(count).To(gomega.Equal(1), "pods of %s/%s", name, it.Name)
			}
		}
	}
	events := &eventsv1.EventList{}
	gomega.Expect(u.Client.List(ctx, events, client.InNamespace(u.Namespace))).To(gomega.Succeed())
	recorded := map[string]int{}
	for _, e := range events.Items {
		if e.Reason != string(v1alpha1.ReasonRunSucceeded) && e.Reason != string(v1alpha1.ReasonRunFailed) {
			continue
		}
		if _, after, ok := strings.Cut(e.Note, " in pod "); ok {
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count)
			}
			// "Item "a" succeeded in pod NAME: Completed, exit code 0"
			recorded[strings.TrimRight(strings.Fields(after)[0], ":,")] += n
		}
	}
	var missing []string
	for _, name := range upgradeGroupsThatRun {
		for _, p := range tracker.PodsOf(u.Namespace, name) {
			gomega.Expect(recorded[p.Name]).To(gomega.BeNumerically("<=", 1), "outcome events of pod %s", p.Name)
			if recorded[p.Name] == 0 {
				missing = append(missing, fmt.Sprintf("%s (ended %s)", p.Name, p.Ended.Format(time.RFC3339)))
			}
		}
	}
	ginkgo.AddReportEntry("upgrade: item pods without an outcome event", fmt.Sprintf("%d %v", len(missing), missing))
}

// ExpectStoredVersions checks that each of the operator's CRDs stores v1alpha1 alone: nothing
// written by either release needs converting.
func (u Upgrade) ExpectStoredVersions(ctx context.Context) {
	ginkgo.GinkgoHelper()
	for _, name := range OwnedCRDs {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(GVRCustomResourceDefinition.GroupVersion().WithKind("CustomResourceDefinition"))
		gomega.Expect(u.Client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(gomega.Succeed())
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		gomega.Expect(stored).To(gomega.Equal([]string{"v1alpha1"}), name)
	}
}

// ExpectQuiet checks that nothing the operator writes or owns in the namespace (groups, types,
// OaatRuns, item pods) changes for the duration, nothing being due.
func (u Upgrade) ExpectQuiet(ctx context.Context, duration time.Duration) {
	ginkgo.GinkgoHelper()
	quiet := u.resourceVersions(ctx, gomega.Default)
	gomega.Consistently(func(g gomega.Gomega) {
		g.Expect(u.resourceVersions(ctx, g)).To(gomega.Equal(quiet))
	}).WithContext(ctx).WithTimeout(duration).WithPolling(5 * time.Second).Should(gomega.Succeed())
}

// resourceVersions maps every object of the namespace that the operator writes or owns to its
// resourceVersion.
func (u Upgrade) resourceVersions(ctx context.Context, g gomega.Gomega) map[string]string {
	out := map[string]string{}
	lists := map[string]client.ObjectList{
		"OaatGroup": &v1alpha1.OaatGroupList{}, "OaatType": &v1alpha1.OaatTypeList{},
		"OaatRun": &v1alpha1.OaatRunList{}, "Pod": &corev1.PodList{},
	}
	for kind, list := range lists {
		g.Expect(u.Client.List(ctx, list, client.InNamespace(u.Namespace))).To(gomega.Succeed())
		items, err := meta.ExtractList(list)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		for _, item := range items {
			o, err := meta.Accessor(item)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			if kind == "Pod" && o.GetLabels()["control-plane"] != "" {
				continue // the manager's own pod: the kubelet updates it
			}
			version := o.GetResourceVersion()
			if kind == "Pod" {
				// The operator only creates and deletes item pods (a new key, a missing one, or a
				// deletion under way); the real node's kubelet still updates a finished pod's
				// status long after the phase that recorded its run (a clean-clone run saw one
				// move 10 s into the quiet minute, the groups unchanged).
				version = fmt.Sprintf("generation %d, deleting %t", o.GetGeneration(), o.GetDeletionTimestamp() != nil)
			}
			out[fmt.Sprintf("%s %s/%s", kind, types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, o.GetUID())] = version
		}
	}
	return out
}
