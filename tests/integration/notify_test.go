package integration

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/controllers"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/internal/notify"
	"github.com/oaat-io/oaat-operator/tests/support"
)

var _ = Describe("A group's transitions sent as CloudEvents", func() {
	// The manager allows the receiver's address as a group's sink. A failed run that parks its
	// item reaches it as two CloudEvents; while it is down, the next failure waits in the group's
	// outbox (condition Notified False, a Warning event); once it is back, a manager started
	// meanwhile, which never saw the failure, sends it and the outbox empties. A
	// group whose sink the manager does not allow sends nothing and says why.
	It("delivers failed runs and parked items, keeps them while the sink is down, and refuses a sink not allowed", func(ctx SpecContext) {
		port, err := devkit.FreePort()
		Expect(err).NotTo(HaveOccurred())
		sink := support.NewEventReceiver("127.0.0.1:" + strconv.Itoa(port))
		Expect(sink.Start()).To(Succeed())
		DeferCleanup(sink.Stop)
		options := managerOptions{notify: controllers.NotifyOptions{
			GroupSinkPrefixes: []string{sink.URL("/")}, Send: notify.HTTPSender(nil),
		}}
		stopManager()
		stopManager = startManagerWith(options)
		group := newGroup("notified", "a", "b")
		group.Spec.MaxConsecutiveFailures = 1
		group.Spec.Notify = &v1alpha1.Notify{Sink: sink.URL("/hook")}
		refused := newGroup("refused", "c")
		refused.Spec.Suspend = true
		refused.Spec.Notify = &v1alpha1.Notify{Sink: "http://192.0.2.1/hook"}
		create(ctx, newOaatType(typeName), group, refused)

		By("refusing the sink the manager does not allow")
		Eventually(func(g Gomega) {
			expectCondition(g, getGroup(ctx, g, "refused"), v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkNotAllowed)
		}).WithContext(ctx).Should(Succeed())

		By("sending the first failure and the parking it causes")
		first := waitForLivePod(ctx, "notified")
		markRunning(ctx, first.Name)
		finishPod(ctx, first.Name, 1, "Error")
		item := first.Annotations[v1alpha1.AnnotationItem]
		Eventually(received(sink)).WithContext(ctx).Should(Equal([]string{"io.oaat.runfailed " + item, "io.oaat.itemparked " + item}))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "notified")
			g.Expect(group.Status.Notifications).NotTo(BeNil())
			g.Expect(group.Status.Notifications.Pending).To(BeEmpty())
			g.Expect(group.Status.Notifications.Next).To(Equal(int64(2)))
			expectCondition(g, group, v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached)
		}).WithContext(ctx).Should(Succeed())

		By("keeping the next failure in the outbox while the sink is down")
		sink.SetRefusing(true)
		second := waitForLivePod(ctx, "notified", first.Name)
		markRunning(ctx, second.Name)
		finishPod(ctx, second.Name, 1, "Error")
		other := second.Annotations[v1alpha1.AnnotationItem]
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "notified")
			g.Expect(group.Status.Notifications.Pending).To(HaveLen(2))
			expectCondition(g, group, v1alpha1.ConditionNotified, metav1.ConditionFalse, v1alpha1.ReasonSinkUnreachable)
		}).WithContext(ctx).Should(Succeed())
		expectEvent(ctx, "notified", corev1.EventTypeWarning, v1alpha1.ReasonSinkUnreachable)

		By("delivering it once the sink is back, from a manager started meanwhile (the outbox is the status)")
		stopManager()
		stopManager = startManagerWith(options)
		sink.SetRefusing(false)
		Eventually(received(sink)).WithContext(ctx).Should(Equal([]string{
			"io.oaat.runfailed " + item, "io.oaat.itemparked " + item, "io.oaat.runfailed " + other, "io.oaat.itemparked " + other,
		}))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "notified")
			g.Expect(group.Status.Notifications.Pending).To(BeEmpty())
			expectCondition(g, group, v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached)
		}).WithContext(ctx).Should(Succeed())
	})
})

// received are the type and subject of each event the receiver took, in order.
func received(sink *support.EventReceiver) func() []string {
	return func() []string {
		var out []string
		for _, e := range sink.Events() {
			out = append(out, e.Type+" "+e.Subject)
		}
		return out
	}
}
