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
	dir := GinkgoT().TempDir()
	plugin := filepath.Join(dir, "kubectl-oaat")
	build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "../../cmd/kubectl-oaat")
	out, err := build.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "building the plugin: %s", out)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, testEnv.KubeConfig, 0o600)).To(Succeed())
	out, err = exec.CommandContext(ctx, plugin, "--kubeconfig", kubeconfig, "-n", ns, "plan", group, "--for", horizon.String()).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "kubectl oaat plan: %s", out)
	var runs []plannedRun
	for _, m := range plannedRow.FindAllStringSubmatch(string(out), -1) {
		start, err := time.Parse(time.RFC3339, m[1])
		Expect(err).NotTo(HaveOccurred())
		runs = append(runs, plannedRun{item: m[2], start: start})
	}
	return string(out), runs
}

var _ = Describe("The forecast", func() {
	It("predicts with kubectl oaat plan the order in which the items then run, when nothing fails", func(ctx SpecContext) {
		const runFor = 1100 * time.Millisecond
		group := newGroup("forecast", "a", "b", "c")
		group.Spec.Frequency = "15s"
		create(ctx, newOaatType(typeName), group)

		By("running each item once, so that their last successes differ and no tie is left to chance")
		var previous []string
		playRun := func() (string, time.Time) {
			pod := waitForLivePodWithin(ctx, 30*time.Second, "forecast", previous...)
			previous = append(previous, pod.Name)
			markRunning(ctx, pod.Name)
			time.Sleep(runFor)
			finishPod(ctx, pod.Name, 0, "Completed")
			return pod.Annotations[v1alpha1.AnnotationItem], pod.CreationTimestamp.Time
		}
		for range 3 {
			playRun()
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
		for i, want := range planned {
			item, created := playRun()
			Expect(item).To(Equal(want.item), "run %d of the plan:\n%s", i, out)
			Expect(created).To(BeTemporally("~", want.start, 3*time.Second), "start of run %d (%s)", i, item)
		}
	}, SpecTimeout(3*time.Minute))
})
