//go:build e2e

package e2e

import (
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// forecastRow is a row of `kubectl oaat plan`'s table whose run ends within the forecast: its
// start and its item.
var forecastRow = regexp.MustCompile(`(?m)^ {2}(\S+Z) \(\S+\)\s+\S+Z \(\S+\)\s+(\S+)`)

var _ = Describe("The forecast", func() {
	It("predicts with kubectl oaat plan the runs that kwok's pods then make, when nothing fails", SpecTimeout(3*time.Minute), func(ctx SpecContext) {
		group := newGroup("planned", "quick", "a", "b", "c")
		group.Spec.Frequency = "20s"
		create(ctx, newOaatType("quick", "1s", 0), group)

		By("letting each item succeed once, so that their last successes differ")
		Eventually(func(g Gomega) {
			st := getGroup(ctx, g, "planned").Status
			g.Expect(st.CurrentRun).To(BeNil())
			g.Expect(st.Items).To(HaveLen(3))
			for _, it := range st.Items {
				g.Expect(it.LastSuccess).NotTo(BeNil(), "item %s", it.Name)
			}
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		Expect(tracker.PodsOf(ns, "planned")).To(HaveLen(3))

		By("asking kubectl oaat plan for the next 45 seconds")
		out := kubectlOaat(ctx, Default, "plan", "planned", "--for", "45s")
		GinkgoWriter.Printf("kubectl oaat plan:\n%s\n", out)
		Expect(out).NotTo(ContainSubstring("picked at random"))
		var items []string
		var starts []time.Time
		for _, m := range forecastRow.FindAllStringSubmatch(out, -1) {
			start, err := time.Parse(time.RFC3339, m[1])
			Expect(err).NotTo(HaveOccurred())
			starts, items = append(starts, start), append(items, m[2])
		}
		Expect(len(items)).To(BeNumerically(">=", 4), "the plan predicts each item again within 45 s:\n%s", out)

		By("comparing the pods that then ran with the prediction: the same items in the same order, each started within 5 s of its predicted start")
		var ran []string
		Eventually(func(g Gomega) {
			pods := tracker.PodsOf(ns, "planned")
			g.Expect(len(pods)).To(BeNumerically(">=", 3+len(items)))
			ran = nil
			for i, p := range pods[3 : 3+len(items)] {
				ran = append(ran, p.Item)
				g.Expect(p.Created.Time).To(BeTemporally("~", starts[i], 5*time.Second), "start of run %d (%s):\n%s", i, p.Item, out)
			}
		}).WithContext(ctx).WithTimeout(90 * time.Second).WithPolling(time.Second).Should(Succeed())
		Expect(ran).To(Equal(items), "the order of the runs:\n%s", out)
	})
})
