//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The console transcripts of README.md and docs/ marked <!-- transcript: NAME --> are made here:
// a scenario brings namespace oaat-demo to the state each one shows, with item outcomes scripted
// through kwok (so that the same items succeed, fail and run every time), and runs its commands
// as the page shows them, with kubectl and the kubectl-oaat plugin, as the cluster's admin whose
// current namespace is oaat-demo. With WRITE_TRANSCRIPTS=1 (make docs-transcripts) the outputs
// replace the blocks; otherwise each block must match, ages, clock times, timestamps and
// generated name suffixes aside (support.NormaliseTranscript).

// transcriptsNamespace is the namespace the pages' commands name or assume.
const transcriptsNamespace = "oaat-demo"

// transcript is what the block of a page shows: its commands, as a user types them (a trailing
// "# ..." is a comment of the page), with their outputs, or only the output of its one command
// when the page shows no prompt.
type transcript struct {
	name     string
	commands []string
	noPrompt bool
}

// The transcripts, by the state of the scenario they show.
var (
	// With the lock nas held by photos and wanted by videos.
	lockTranscripts = []transcript{
		{name: "locks", commands: []string{"kubectl get olock", "kubectl oaat locks"}},
	}
	// From there: restore, of priority 10, waits too, ahead of videos.
	priorityTranscripts = []transcript{
		{name: "lock-priority", commands: []string{"kubectl oaat locks"}},
	}
	// With testsimple running /srv/photos after item1 succeeded and item2 and item3 failed,
	// testcontrolled running db3, nightly waiting for its first round.
	groupTranscripts = []transcript{
		{name: "demo-status", commands: []string{"kubectl get oag -n oaat-demo", "kubectl oaat status testsimple -n oaat-demo"}},
		{name: "get-oag", commands: []string{"kubectl get oag"}},
		{name: "status-testsimple", commands: []string{"kubectl oaat status testsimple"}, noPrompt: true},
		{name: "status-nightly", commands: []string{"kubectl oaat status nightly"}, noPrompt: true},
	}
	// From there: an on-demand run of /srv/photos followed to its end, then suspend and resume.
	actionTranscripts = []transcript{
		{name: "plugin-actions", commands: []string{
			"kubectl oaat run testsimple /srv/photos --wait      # an OaatRun, followed to its end",
			"kubectl oaat suspend testsimple                      # spec.suspend=true: a running item finishes",
			"kubectl oaat resume testsimple",
		}},
	}
	// With that run Succeeded and one for an item the group does not list Rejected.
	runTranscripts = []transcript{
		{name: "get-orun", commands: []string{"kubectl get orun --sort-by=.metadata.creationTimestamp"}},
	}
	// With the circuit breaker of nas open after /srv/photos, /srv/music and /srv/documents failed
	// with exit code 75, and one probe, of /srv/mail, failed too.
	breakerOpenTranscripts = []transcript{
		{name: "breaker-condition", commands: []string{
			`kubectl get oag nas -o jsonpath='{.status.conditions[?(@.type=="TargetAvailable")].message}'`,
		}},
		{name: "breaker-status", commands: []string{"kubectl get oag nas -o jsonpath='{.status.circuitBreaker}'"}},
		{name: "breaker-oaat-status", commands: []string{"kubectl oaat status nas"}},
	}
	// From there: the next probe, of /srv/photos, succeeded and closed it.
	breakerClosedTranscripts = []transcript{
		{name: "breaker-events", commands: []string{
			"kubectl get events --field-selector involvedObject.name=nas,reason=BreakerOpened",
			"kubectl get events --field-selector involvedObject.name=nas,reason=BreakerClosed",
		}},
	}
)

var _ = Describe("The documentation's transcripts", func() {
	It("are what their commands print on the cluster, ages and generated names aside", SpecTimeout(6*time.Minute), func(ctx SpecContext) {
		pages, err := support.TranscriptPages(paths.repoRoot, "tests/e2e")
		Expect(err).NotTo(HaveOccurred())

		runner := demoRunner(useDemoNamespace(ctx))
		outputs := map[string]string{}
		capture := func(set []transcript) {
			GinkgoHelper()
			for _, t := range set {
				outputs[t.name] = runTranscript(ctx, runner, t)
			}
		}

		By("holding the lock nas with photos while videos waits for it")
		lockScenario(ctx)
		capture(lockTranscripts)

		By("a restore drill of priority 10 waiting for nas too, ahead of videos")
		restore := support.Group(ns, "restore", "backup", "/srv/photos").Locks("nas").Obj()
		restore.Spec.Priority = ptr.To[int32](10)
		create(ctx, restore)
		Eventually(func(g Gomega) {
			wait := getGroup(ctx, g, "restore").Status.LockWait
			g.Expect(wait).NotTo(BeNil())
			g.Expect(wait.Priority).To(BeEquivalentTo(10))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		capture(priorityTranscripts)
		deleteGroups(ctx, "photos", "videos", "restore")

		By("running testsimple's items with scripted outcomes, and testcontrolled's db3")
		groupScenario(ctx)
		capture(groupTranscripts)

		By("running /srv/photos on demand, suspending and resuming testsimple")
		updateType(ctx, "oaattest", scriptRun("3s", "0"))
		current := getGroup(ctx, Default, "testsimple").Status.CurrentRun
		Expect(current).NotTo(BeNil(), "the on-demand run must queue behind /srv/photos's run, which ended too early")
		Expect(current.Item).To(Equal("/srv/photos"))
		capture(actionTranscripts)
		expectSuspended(ctx, "testsimple", false)

		By("asking for an item testsimple does not list")
		out, err := runner.Command(ctx, "kubectl oaat run testsimple item9")
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Eventually(func(g Gomega) {
			runs := &v1alpha1.OaatRunList{}
			g.Expect(k8sClient.List(ctx, runs, client.InNamespace(ns))).To(Succeed())
			var phases []v1alpha1.OaatRunPhase
			for _, r := range runs.Items {
				phases = append(phases, r.Status.Phase)
			}
			g.Expect(phases).To(ConsistOf(v1alpha1.OaatRunSucceeded, v1alpha1.OaatRunRejected))
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		capture(runTranscripts)

		By("opening the circuit breaker of nas with three failures, failing one probe, then closing it with the next")
		breakerScenario(ctx, func() { capture(breakerOpenTranscripts) })
		capture(breakerClosedTranscripts)

		stale, err := support.CheckTranscripts(paths.repoRoot, pages, outputs, os.Getenv("WRITE_TRANSCRIPTS") == "1")
		Expect(err).NotTo(HaveOccurred())
		if len(stale) > 0 {
			Fail("the pages' transcripts differ from what their commands print (`make docs-transcripts` writes them):\n" +
				strings.Join(stale, "\n"))
		}
	})
})

// useDemoNamespace makes the test's namespace oaat-demo, in which the pages' commands run, until
// the test ends, and returns a kubeconfig of the cluster's admin whose current namespace it is.
func useDemoNamespace(ctx SpecContext) string {
	GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: transcriptsNamespace, Labels: map[string]string{labelSuite: "true"}}}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	suiteNamespace := ns
	ns = transcriptsNamespace
	DeferCleanup(func(ctx SpecContext) {
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(transcriptsNamespace))).To(Succeed())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, namespace))).To(Succeed())
		ns = suiteNamespace
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(namespace), &corev1.Namespace{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "namespace %s still exists", transcriptsNamespace)
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	})
	Eventually(func() error {
		_, err := clientset.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "the default ServiceAccount of %s", ns)
	return demoKubeconfig(ctx)
}

// demoKubeconfig returns a kubeconfig of the cluster's admin whose current namespace is oaat-demo,
// removed when the test ends.
func demoKubeconfig(ctx SpecContext) string {
	GinkgoHelper()
	kubeconfig := filepath.Join(GinkgoT().TempDir(), "demo.kubeconfig")
	admin, err := os.ReadFile(adminKubeconfig)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(kubeconfig, admin, 0o600)).To(Succeed())
	out, err := exec.CommandContext(ctx, paths.kubectl, "config", "set-context", "--current",
		"--namespace", transcriptsNamespace, "--kubeconfig", kubeconfig).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return kubeconfig
}

// demoRunner runs the pages' command lines with kubectl and the kubectl-oaat plugin, as the
// kubeconfig's user.
func demoRunner(kubeconfig string) support.TranscriptRunner {
	return support.TranscriptRunner{Kubectl: paths.kubectl, KubectlOaat: paths.kubectlOaat, Dir: paths.repoRoot,
		Env: []string{"KUBECONFIG=" + kubeconfig}}
}

// runTranscript runs the transcript's commands and returns the block the page should hold.
func runTranscript(ctx context.Context, runner support.TranscriptRunner, t transcript) string {
	GinkgoHelper()
	block := &support.Transcript{Runner: runner, NoPrompt: t.noPrompt}
	for _, line := range t.commands {
		Expect(block.Run(ctx, line)).To(Succeed(), "transcript %s", t.name)
	}
	return block.String()
}

// scriptRun sets how the next item pods of an OaatType end on kwok: after duration, with exitCode.
func scriptRun(duration, exitCode string) func(*v1alpha1.OaatType) {
	return func(ot *v1alpha1.OaatType) {
		ot.Spec.Template.Annotations[annotationTestDuration] = duration
		ot.Spec.Template.Annotations[annotationTestExitCode] = exitCode
	}
}

// sampleGroup reads the OaatGroup of a file of config/samples, in the test's namespace.
func sampleGroup(file string) *v1alpha1.OaatGroup {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(paths.repoRoot, "config", "samples", file))
	Expect(err).NotTo(HaveOccurred())
	group := &v1alpha1.OaatGroup{}
	Expect(yaml.UnmarshalStrict(data, group)).To(Succeed(), "%s", file)
	group.Namespace = ns
	return group
}

// lockScenario makes photos hold the lock nas (capacity 1) with a long run of /srv/photos, then
// videos wait for it.
func lockScenario(ctx SpecContext) {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(paths.repoRoot, "config", "samples", "oaat_v1alpha1_oaatlock.yaml"))
	Expect(err).NotTo(HaveOccurred())
	lock := &v1alpha1.OaatLock{}
	Expect(yaml.UnmarshalStrict(data, lock)).To(Succeed())
	lock.Namespace = ns
	photos := support.Group(ns, "photos", "backup", "/srv/photos").Locks(lock.Name).Obj()
	videos := support.Group(ns, "videos", "backup", "/srv/videos").Locks(lock.Name).Obj()
	create(ctx, newOaatType("backup", "10m", 0), lock, photos)
	waitForRunningPod(ctx, "photos")
	create(ctx, videos)
	Eventually(func(g Gomega) {
		got := &v1alpha1.OaatLock{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lock), got)).To(Succeed())
		g.Expect(got.Status.Holders).To(HaveLen(1))
		g.Expect(got.Status.WaitingGroups).To(BeEquivalentTo(1))
		g.Expect(getGroup(ctx, g, "videos").Status.LockWait).NotTo(BeNil())
	}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
}

// deleteGroups deletes the groups, the last of the namespace, and waits until it has none left,
// so that kubectl get oag lists none of them.
func deleteGroups(ctx SpecContext, names ...string) {
	GinkgoHelper()
	for _, name := range names {
		deleteGroup(ctx, name)
	}
	Eventually(func(g Gomega) {
		groups := &v1alpha1.OaatGroupList{}
		g.Expect(k8sClient.List(ctx, groups, client.InNamespace(ns))).To(Succeed())
		g.Expect(groups.Items).To(BeEmpty())
	}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
}

// groupScenario brings the samples' groups to the state of the README: testcontrolled runs db3,
// nightly waits for its first round, and testsimple's item1 succeeded, item2 and item3 failed
// within the last 30 s (its failureCoolOff) and /srv/photos runs. Which item a group runs next is
// random among equals, so each group gets its items one at a time: the only candidate runs.
// nightly's first round starts at one instant between 00:00 and 00:15 UTC (01:00 Berlin time in
// winter, plus its jitter); a run of the test across that instant would see its items run.
func groupScenario(ctx SpecContext) {
	GinkgoHelper()
	oaatType := newOaatType("oaattest", "2m", 0)
	controlled := sampleGroup("oaat_v1alpha1_oaatgroup_controlled.yaml")
	controlledItems := controlled.Spec.OaatItems
	controlled.Spec.OaatItems = []string{"db3"}
	// Its blackout window (02:00-04:00 Berlin time on weekdays) would keep db3 from starting when
	// the test runs then; kubectl get oag does not show windows.
	controlled.Spec.BlackoutWindows = nil
	create(ctx, oaatType, controlled, sampleGroup("oaat_v1alpha1_oaatgroup_scheduled.yaml"))
	waitForRunningPod(ctx, controlled.Name)
	updateGroup(ctx, controlled.Name, func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = controlledItems })

	simple := sampleGroup("oaat_v1alpha1_oaatgroup.yaml")
	simpleItems := simple.Spec.OaatItems
	Expect(simpleItems).To(Equal([]string{"item1", "item2", "item3", "/srv/photos"}))
	updateType(ctx, oaatType.Name, scriptRun("1s", "0"))
	simple.Spec.OaatItems = simpleItems[:1]
	create(ctx, simple)
	waitForOutcome(ctx, simple.Name, "item1", true)
	updateType(ctx, oaatType.Name, scriptRun("1s", "1"))
	for i, item := range simpleItems[1:3] {
		updateGroup(ctx, simple.Name, func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = simpleItems[:i+2] })
		waitForOutcome(ctx, simple.Name, item, false)
	}
	// Long enough for the transcripts of this state on a busy machine, which the on-demand run
	// after them waits for.
	updateType(ctx, oaatType.Name, scriptRun("40s", "0"))
	updateGroup(ctx, simple.Name, func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = simpleItems })
	Expect(waitForRunningPod(ctx, simple.Name).Annotations[v1alpha1.AnnotationItem]).To(Equal("/srv/photos"))
	Eventually(func(g Gomega) {
		for _, name := range []string{controlled.Name, simple.Name} {
			group := getGroup(ctx, g, name)
			g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation), "group %s has seen its items", name)
		}
		group := getGroup(ctx, g, simple.Name)
		waiting := map[string]string{}
		for _, it := range group.Status.Items {
			waiting[it.Name] = string(it.WaitReason)
		}
		g.Expect(waiting).To(HaveKeyWithValue("item2", "CoolingOff"))
		g.Expect(waiting).To(HaveKeyWithValue("item3", "CoolingOff"))
	}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
}

// waitForOutcome waits until the item of the group has succeeded, or failed, once.
func waitForOutcome(ctx SpecContext, group, item string, succeeded bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		it := itemOf(g, getGroup(ctx, g, group), item)
		if succeeded {
			g.Expect(it.LastSuccess).NotTo(BeNil())
		} else {
			g.Expect(it.LastFailure).NotTo(BeNil())
		}
	}).WithContext(ctx).WithTimeout(20*time.Second).Should(Succeed(), "item %s of group %s", item, group)
}

// expectSuspended checks spec.suspend of the group.
func expectSuspended(ctx SpecContext, group string, suspended bool) {
	GinkgoHelper()
	Expect(getGroup(ctx, Default, group).Spec.Suspend).To(Equal(suspended))
}

// breakerScenario brings group nas (of lockScenario's type backup, whose pods stand for a target
// that exits 75 while it is down) to the state of docs/circuit-breaker.md and calls whileOpen there: its
// breaker opened after /srv/photos, /srv/music and /srv/documents failed in a row, and the first
// probe, of /srv/mail, failed. Which item runs next is random among equals, so the group gets
// its first three items one at a time (each earlier one cools off for 10m) and /srv/mail once
// the breaker is open: the first probe is the item that never failed, the next one the item
// whose failure is the oldest of those not probed yet, /srv/photos. Then the target comes back
// and that probe closes the breaker. The probe waits (15s, then 30s) leave whileOpen its time.
func breakerScenario(ctx SpecContext, whileOpen func()) {
	GinkgoHelper()
	const name = "nas"
	items := []string{"/srv/photos", "/srv/music", "/srv/documents", "/srv/mail"}
	updateType(ctx, "backup", scriptRun("1s", "75"))
	nas := newGroup(name, "backup", items[0])
	nas.Spec.Frequency = "1d"
	nas.Spec.FailureCoolOff = "10m"
	nas.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
		ConsecutiveItemFailures: 3, ExitCodes: []int32{75}, ProbeInterval: "15s", MaxProbeInterval: "1m",
	}
	create(ctx, nas)
	waitForOutcome(ctx, name, items[0], false)
	for i, item := range items[1:3] {
		updateGroup(ctx, name, func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = items[:i+2] })
		waitForOutcome(ctx, name, item, false)
	}
	Eventually(func(g Gomega) {
		group := getGroup(ctx, g, name)
		g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerOpen))
		g.Expect(group.Status.CircuitBreaker.FailedItems).To(Equal(items[:3]))
	}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
	updateGroup(ctx, name, func(g *v1alpha1.OaatGroup) { g.Spec.OaatItems = items })

	Eventually(func(g Gomega) {
		group := getGroup(ctx, g, name)
		g.Expect(group.Status.ObservedGeneration).To(Equal(group.Generation))
		g.Expect(group.Status.CircuitBreaker).To(HaveField("FailedProbes", BeEquivalentTo(1)))
		g.Expect(group.Status.CurrentRun).To(BeNil())
		g.Expect(itemOf(g, group, "/srv/mail").LastStarted).NotTo(BeNil(), "the first probe is /srv/mail's")
	}).WithContext(ctx).WithTimeout(40 * time.Second).WithPolling(250 * time.Millisecond).Should(Succeed())
	whileOpen()
	Expect(getGroup(ctx, Default, name).Status.CircuitBreaker).To(HaveField("FailedProbes", BeEquivalentTo(1)),
		"the second probe came before the transcripts of the open breaker were done")

	updateType(ctx, "backup", scriptRun("1s", "0"))
	Eventually(func(g Gomega) {
		group := getGroup(ctx, g, name)
		g.Expect(group.Status.CircuitBreaker).To(HaveField("State", v1alpha1.BreakerClosed))
		g.Expect(groupEvents(ctx, g, name, v1alpha1.ReasonBreakerClosed)).To(HaveLen(1))
	}).WithContext(ctx).WithTimeout(60 * time.Second).Should(Succeed())
	Expect(groupEvents(ctx, Default, name, v1alpha1.ReasonBreakerOpened)).To(HaveLen(1))
}
