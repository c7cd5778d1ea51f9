package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// plannedRow is a row of `kubectl oaat plan`'s table whose run ends within the forecast: its
// start and its item.
var plannedRow = regexp.MustCompile(`(?m)^ {2}(\S+Z) \(\S+\)\s+\S+Z \(\S+\)\s+(\S+)`)

// plannedRun is a run that `kubectl oaat plan` predicts.
type plannedRun struct {
	item  string
	start time.Time
}

// buildKubectlOaat builds the plugin as make does (support.VersionLDFlags), once per process (a build on a loaded machine takes tens of
// seconds, which every spec that runs the plugin would otherwise spend of its timeout), and
// writes a kubeconfig of the suite's API server into a directory of the spec's own beside a link
// to it; it returns the plugin's path and the kubeconfig's.
func buildKubectlOaat() (plugin, kubeconfig string) {
	GinkgoHelper()
	builtPlugin.once.Do(func() {
		builtPlugin.path = filepath.Join(suiteDir, "kubectl-oaat")
		// Not the spec's context: a build cut short by one spec's timeout would fail every later one.
		buildCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ldflags, err := support.VersionLDFlags("../..")
		if err != nil {
			builtPlugin.err = err
			return
		}
		if out, err := exec.CommandContext(buildCtx, "go", "build", "-ldflags", ldflags, "-o", builtPlugin.path, "../../cmd/kubectl-oaat").CombinedOutput(); err != nil {
			builtPlugin.err = fmt.Errorf("building the plugin: %w: %s", err, out)
		}
	})
	Expect(builtPlugin.err).NotTo(HaveOccurred())
	dir := GinkgoT().TempDir()
	plugin = filepath.Join(dir, "kubectl-oaat")
	Expect(os.Symlink(builtPlugin.path, plugin)).To(Succeed())
	kubeconfig = filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, testEnv.KubeConfig, 0o600)).To(Succeed())
	return plugin, kubeconfig
}

// builtPlugin is the plugin buildKubectlOaat built in this process.
var builtPlugin struct {
	once sync.Once
	path string
	err  error
}

// kubectlOaatPlan runs `kubectl oaat plan group --for horizon` against the suite's API server, as
// a user would, with the plugin buildKubectlOaat built, and returns its output and the runs it
// predicts.
func kubectlOaatPlan(ctx SpecContext, plugin, kubeconfig, group string, horizon time.Duration) (string, []plannedRun) {
	GinkgoHelper()
	out, err := exec.CommandContext(ctx, plugin, "--kubeconfig", kubeconfig, "-n", ns, "plan", group, "--for", horizon.String()).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl oaat plan: %s", out)
	var runs []plannedRun
	for _, m := range plannedRow.FindAllStringSubmatch(string(out), -1) {
		start, err := time.Parse(time.RFC3339, m[1])
		Expect(err).NotTo(HaveOccurred())
		runs = append(runs, plannedRun{item: m[2], start: start})
	}
	return string(out), runs
}

// fakeKubelet plays the kubelet for the pods of a group: each run it is asked for succeeds after runFor.
type fakeKubelet struct {
	group  string
	runFor time.Duration
	// seen are the pods it has run.
	seen []string
}

// run waits for the group's next pod, runs it to success and returns its item and creation.
func (k *fakeKubelet) run(ctx SpecContext, within time.Duration) (string, time.Time) {
	GinkgoHelper()
	pod := waitForLivePodWithin(ctx, within, k.group, k.seen...)
	k.seen = append(k.seen, pod.Name)
	markRunning(ctx, pod.Name)
	time.Sleep(k.runFor)
	finishPod(ctx, pod.Name, 0, "Completed")
	return pod.Annotations[v1alpha1.AnnotationItem], pod.CreationTimestamp.Time
}

// expectRunsAsPlanned plays the kubelet for the planned runs and checks each against the plan:
// the same item, started within 3 s of its predicted start.
func (k *fakeKubelet) expectRunsAsPlanned(ctx SpecContext, planned []plannedRun, within time.Duration, plan string) {
	GinkgoHelper()
	for i, want := range planned {
		item, created := k.run(ctx, within)
		Expect(item).To(Equal(want.item), "run %d of the plan:\n%s", i, plan)
		Expect(created).To(BeTemporally("~", want.start, 3*time.Second), "start of run %d (%s):\n%s", i, item, plan)
	}
}

var _ = Describe("The forecast", func() {
	It("predicts with kubectl oaat plan the order in which the items then run, when nothing fails", func(ctx SpecContext) {
		plugin, kubeconfig := buildKubectlOaat()
		group := newGroup("forecast", "a", "b", "c")
		group.Spec.Frequency = "10s"
		create(ctx, newOaatType(typeName), group)

		By("running each item once, so that their last successes differ and no tie is left to chance")
		k := &fakeKubelet{group: "forecast", runFor: 1100 * time.Millisecond}
		for range 3 {
			k.run(ctx, 30*time.Second)
		}
		Eventually(func(g Gomega) {
			g2 := getGroup(ctx, g, "forecast")
			g.Expect(g2.Status.CurrentRun).To(BeNil())
			for _, it := range g2.Status.Items {
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", it.Name)
				g.Expect(it.RecentRunSeconds).NotTo(BeEmpty(), "item %s", it.Name)
			}
			expectCondition(g, g2, v1alpha1.ConditionAtRisk, "False", v1alpha1.ReasonOnTime)
		}).WithContext(ctx).Should(Succeed())

		By("asking kubectl oaat plan for the next 25 seconds")
		out, planned := kubectlOaatPlan(ctx, plugin, kubeconfig, "forecast", 25*time.Second)
		GinkgoWriter.Printf("kubectl oaat plan:\n%s\n", out)
		Expect(out).NotTo(ContainSubstring("picked at random"))
		Expect(len(planned)).To(BeNumerically(">=", 4), "the plan predicts each item again within 25 s:\n%s", out)

		By("playing the kubelet, every run succeeding, and comparing each run with the prediction")
		k.expectRunsAsPlanned(ctx, planned, 30*time.Second, out)
	}, SpecTimeout(3*time.Minute))

	It("predicts a scheduled round held by a blackout window: the round merges into the next tick's, in the predicted order", func(ctx SpecContext) {
		plugin, kubeconfig := buildKubectlOaat()
		By("choosing the group's first tick, at least 8 s ahead so that the plan comes before it")
		if time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)) < 8*time.Second {
			time.Sleep(time.Until(time.Now().Truncate(time.Minute).Add(time.Minute + time.Second)))
		}
		first := time.Now().Truncate(time.Minute).Add(time.Minute)

		By("creating the group with a blackout window over its first tick's minute and a history, as a restore would, while no operator runs")
		stopManager()
		group := newGroup("nightly", "a", "b", "c")
		group.Spec.Frequency, group.Spec.Schedule = "", "* * * * *"
		group.Spec.BlackoutWindows = []v1alpha1.BlackoutWindow{{Start: first.UTC().Format("15:04"), End: first.Add(time.Minute).UTC().Format("15:04")}}
		create(ctx, newOaatType(typeName), group)
		// Distinct last successes leave no tie to chance; one second per run is what the kubelet
		// below takes (its 1.1 s round to 1).
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			g := getGroup(ctx, Default, "nightly")
			g.Status.Items = nil
			for i, item := range []string{"b", "c", "a"} {
				success := metav1.NewTime(first.Add(-time.Duration(10-i) * time.Hour))
				g.Status.Items = append(g.Status.Items, v1alpha1.ItemStatus{Name: item, LastSuccess: &success, RecentRunSeconds: []int64{1}})
			}
			return k8sClient.Status().Update(ctx, g)
		})).To(Succeed())
		stopManager = startManager()
		Eventually(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "nightly").Status.NextRoundAt).To(HaveField("Time", BeTemporally("==", first)))
		}).WithContext(ctx).Should(Succeed())

		By("predicting the round of the first tick held by the window, merged into the round of the tick after")
		out, planned := kubectlOaatPlan(ctx, plugin, kubeconfig, "nightly", time.Until(first)+75*time.Second)
		GinkgoWriter.Printf("kubectl oaat plan:\n%s\n", out)
		Expect(out).NotTo(ContainSubstring("picked at random"))
		Expect(out).To(ContainSubstring(": late, it merges into the next round"))
		Expect(planned).To(HaveLen(3), "the plan predicts the merged round's three runs:\n%s", out)
		Expect(planned[0].start).To(BeTemporally(">=", first.Add(time.Minute)), "nothing runs in the window:\n%s", out)
		Expect([]string{planned[0].item, planned[1].item, planned[2].item}).To(Equal([]string{"b", "c", "a"}), "oldest success first:\n%s", out)

		By("warning with condition AtRisk once the held round has started")
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, "nightly"), v1alpha1.ConditionAtRisk, "True", v1alpha1.ReasonRoundLate)
		}).WithContext(ctx).WithTimeout(time.Until(first) + 30*time.Second).Should(Succeed())

		By("playing the kubelet: the merged round runs as predicted")
		k := &fakeKubelet{group: "nightly", runFor: 1100 * time.Millisecond}
		k.expectRunsAsPlanned(ctx, planned, 100*time.Second, out)
	}, SpecTimeout(4*time.Minute))
})
