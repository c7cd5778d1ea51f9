package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/controllers"
	"github.com/oaat-io/oaat-operator/internal/notify"
)

// receiver is a CloudEvents sink: it keeps the structured events it is sent (type, subject and
// id), and answers 503 while down.
type receiver struct {
	mu       sync.Mutex
	received []string
	ids      map[string]int
	down     bool
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var e struct {
		ID, Type, Subject string
	}
	if err := json.NewDecoder(req.Body).Decode(&e); err != nil || req.Header.Get("Content-Type") != "application/cloudevents+json" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.ids[e.ID]++
	if r.ids[e.ID] == 1 {
		r.received = append(r.received, e.Type+" "+e.Subject)
	}
	w.WriteHeader(http.StatusAccepted)
}

func (r *receiver) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.received...)
}

func (r *receiver) setDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

var _ = Describe("A group's transitions sent as CloudEvents", func() {
	// The manager allows the receiver's address as a group's sink. A failed run that parks its
	// item reaches it as two CloudEvents; while it is down, the next failure waits in the group's
	// outbox (condition Notified False, a Warning event); once it is back, a manager started
	// meanwhile, which never saw the failure, sends it and the outbox empties. A
	// group whose sink the manager does not allow sends nothing and says why.
	It("delivers failed runs and parked items, keeps them while the sink is down, and refuses a sink not allowed", func(ctx SpecContext) {
		sink := &receiver{ids: map[string]int{}}
		server := httptest.NewServer(sink)
		DeferCleanup(server.Close)
		options := managerOptions{notify: controllers.NotifyOptions{
			GroupSinkPrefixes: []string{server.URL + "/"}, Send: notify.HTTPSender(nil),
		}}
		stopManager()
		stopManager = startManagerWith(options)
		group := newGroup("notified", "a", "b")
		group.Spec.MaxConsecutiveFailures = 1
		group.Spec.Notify = &v1alpha1.Notify{Sink: server.URL + "/hook"}
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
		Eventually(sink.events).WithContext(ctx).Should(Equal([]string{"io.oaat.runfailed " + item, "io.oaat.itemparked " + item}))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "notified")
			g.Expect(group.Status.Notifications).NotTo(BeNil())
			g.Expect(group.Status.Notifications.Pending).To(BeEmpty())
			g.Expect(group.Status.Notifications.Next).To(Equal(int64(2)))
			expectCondition(g, group, v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached)
		}).WithContext(ctx).Should(Succeed())

		By("keeping the next failure in the outbox while the sink is down")
		sink.setDown(true)
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
		sink.setDown(false)
		Eventually(sink.events).WithContext(ctx).Should(Equal([]string{
			"io.oaat.runfailed " + item, "io.oaat.itemparked " + item, "io.oaat.runfailed " + other, "io.oaat.itemparked " + other,
		}))
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "notified")
			g.Expect(group.Status.Notifications.Pending).To(BeEmpty())
			expectCondition(g, group, v1alpha1.ConditionNotified, metav1.ConditionTrue, v1alpha1.ReasonSinksReached)
		}).WithContext(ctx).Should(Succeed())
	})
})
