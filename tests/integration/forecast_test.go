package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// plannedRow is a row of `kubectl oaat plan`'s table whose run ends within the forecast: its
// start and its item.
var plannedRow = regexp.MustCompile(`(?m)^ {2}(\S+Z) \(\S+\)\s+\S+Z \(\S+\)\s+(\S+)`)

// plannedRun is a run that `kubectl oaat plan` predicts.
type plannedRun struct {
	item  string
	start time.Time
}

// kubectlOaatPlan builds the plugin and runs `kubectl oaat plan group --for horizon` against the
// suite's API server, as a user would, and returns its output and the runs it predicts.
func kubectlOaatPlan(ctx SpecContext, group string, horizon time.Duration) (string, []plannedRun) {
	GinkgoHelper()
	out := buildPlugin(ctx)(ctx, "plan", group, "--for", horizon.String())
	var runs []plannedRun
	for _, m := range plannedRow.FindAllStringSubmatch(out, -1) {
		start, err := time.Parse(time.RFC3339, m[1])
		Expect(err).NotTo(HaveOccurred())
		runs = append(runs, plannedRun{item: m[2], start: start})
	}
	return out, runs
}

// buildPlugin builds the plugin and returns a function that runs it against the suite's API
// server in the test's namespace, as a user would, and returns its output; it must succeed.
func buildPlugin(ctx SpecContext) func(ctx SpecContext, args ...string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	plugin := filepath.Join(dir, "kubectl-oaat")
	build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "../../cmd/kubectl-oaat")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the plugin: %s", out)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, testEnv.KubeConfig, 0o600)).To(Succeed())
	return func(ctx SpecContext, args ...string) string {
		GinkgoHelper()
		out, err := exec.CommandContext(ctx, plugin, append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "kubectl oaat %v: %s", args, out)
		return string(out)
	}
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
		group := newGroup("forecast", "a", "b", "c")
		group.Spec.Frequency = "15s"
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

		By("asking kubectl oaat plan for the next 40 seconds")
		out, planned := kubectlOaatPlan(ctx, "forecast", 40*time.Second)
		GinkgoWriter.Printf("kubectl oaat plan:\n%s\n", out)
		Expect(out).NotTo(ContainSubstring("picked at random"))
		Expect(len(planned)).To(BeNumerically(">=", 4), "the plan predicts each item again within 40 s:\n%s", out)

		By("playing the kubelet, every run succeeding, and comparing each run with the prediction")
		k.expectRunsAsPlanned(ctx, planned, 30*time.Second, out)
	}, SpecTimeout(3*time.Minute))

	It("predicts a scheduled round held by a blackout window: the round merges into the next tick's, in the predicted order", func(ctx SpecContext) {
		group := newGroup("nightly", "a", "b", "c")
		group.Spec.Frequency, group.Spec.Schedule = "", "* * * * *"
		create(ctx, newOaatType(typeName), group)

		By("running the first round, at the first tick after the group's creation")
		k := &fakeKubelet{group: "nightly", runFor: 1100 * time.Millisecond}
		for range 3 {
			k.run(ctx, 90*time.Second)
		}
		var next time.Time
		Eventually(func(g Gomega) {
			g2 := getGroup(ctx, g, "nightly")
			g.Expect(g2.Status.CurrentRun).To(BeNil())
			g.Expect(g2.Status.NextRoundAt).NotTo(BeNil())
			for _, it := range g2.Status.Items {
				g.Expect(it.WaitReason).To(Equal(v1alpha1.WaitNextTick), "item %s", it.Name)
			}
			next = g2.Status.NextRoundAt.Time
		}).WithContext(ctx).Should(Succeed())
		Expect(time.Until(next)).To(BeNumerically(">", 5*time.Second), "the first round ended too close to the next tick for the test")

		By("adding a blackout window over the next tick's minute: that round waits, and merges into the round of the tick after")
		window := v1alpha1.BlackoutWindow{Start: next.UTC().Format("15:04"), End: next.Add(time.Minute).UTC().Format("15:04")}
		updateGroupSpec(ctx, "nightly", func(spec *v1alpha1.OaatGroupSpec) { spec.BlackoutWindows = []v1alpha1.BlackoutWindow{window} })

		out, planned := kubectlOaatPlan(ctx, "nightly", time.Until(next)+75*time.Second)
		GinkgoWriter.Printf("kubectl oaat plan:\n%s\n", out)
		Expect(out).NotTo(ContainSubstring("picked at random"))
		Expect(out).To(ContainSubstring(": late, it merges into the next round"))
		Expect(planned).To(HaveLen(3), "the plan predicts the merged round's three runs:\n%s", out)
		Expect(planned[0].start).To(BeTemporally(">=", next.Add(time.Minute)), "nothing runs in the window:\n%s", out)

		By("warning with condition AtRisk once the held round has started")
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, "nightly"), v1alpha1.ConditionAtRisk, "True", v1alpha1.ReasonRoundLate)
		}).WithContext(ctx).WithTimeout(time.Until(next) + 30*time.Second).Should(Succeed())

		By("playing the kubelet: the merged round runs as predicted")
		k.expectRunsAsPlanned(ctx, planned, 100*time.Second, out)
	}, SpecTimeout(5*time.Minute))
})
