package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// labelItemSource marks a ConfigMap that may be a group's source of items.
const labelItemSource = "oaat.io/item-source"

// labelTouched is put on an OaatRun by a test racing the operator's write.
const labelTouched = "integration.oaat.io/touched"

var _ = Describe("Reliability", func() {
	It("keeps an on-demand run's result when the OaatRun changes between the operator's read and its final write", func(ctx SpecContext) {
		var armed atomic.Bool
		var raced, conflicts atomic.Int32
		// Just before the operator writes the final status of an OaatRun, someone else (a label
		// edit, as kubectl or GitOps would make it) changes the OaatRun on the API server, which
		// then refuses the operator's write of the version it read.
		touchFirst := func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					if run, ok := obj.(*v1alpha1.OaatRun); ok && run.Status.Phase.Finished() && armed.CompareAndSwap(true, false) {
						raced.Add(1)
						touched := &v1alpha1.OaatRun{}
						if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(run), touched); err != nil {
							return err
						}
						touched.Labels = map[string]string{labelTouched: "true"}
						if err := k8sClient.Update(ctx, touched); err != nil {
							return err
						}
					}
					err := c.SubResource(sub).Update(ctx, obj, opts...)
					if apierrors.IsConflict(err) {
						conflicts.Add(1)
					}
					return err
				},
			})
		}
		stopManager()
		stopManager = startManagerWith(managerOptions{wrap: touchFirst})

		group := newGroup("ondemand", "a")
		group.Spec.ExitCodes = &v1alpha1.ExitCodes{Success: []int32{3}}
		create(ctx, newOaatType(typeName), group)
		scheduled := waitForLivePod(ctx, "ondemand")
		create(ctx, newOnDemandRun("now", "ondemand", "a"))
		finishPod(ctx, scheduled.Name, 0, "Completed")
		pod := waitForLivePod(ctx, "ondemand", scheduled.Name)
		Expect(pod.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationOaatRun, "now"))
		expectOnDemandRun(ctx, "now", v1alpha1.OaatRunInProgress, string(v1alpha1.ReasonItemRunning))

		By("ending the run while the OaatRun is being changed")
		armed.Store(true)
		markRunning(ctx, pod.Name)
		finishPod(ctx, pod.Name, 3, "Error")
		onDemandRun := expectOnDemandRun(ctx, "now", v1alpha1.OaatRunSucceeded, "Error")
		Expect(raced.Load()).To(BeEquivalentTo(1), "the OaatRun was not changed before the final write")
		Expect(conflicts.Load()).To(BeNumerically(">=", 1), "the API server did not refuse the stale write")
		Expect(onDemandRun.Labels).To(HaveKeyWithValue(labelTouched, "true"))
		Expect(onDemandRun.Status.ExitCode).To(HaveValue(BeEquivalentTo(3)))
		Expect(onDemandRun.Status.PodName).To(Equal(pod.Name))
		Expect(onDemandRun.Status.FinishedAt).NotTo(BeNil())
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "ondemand")
			g.Expect(group.Status.CurrentRun).To(BeNil())
			g.Expect(itemStatus(group, "a").LastPodName).To(Equal(pod.Name))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			got := &v1alpha1.OaatRun{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "now"}, got)).To(Succeed())
			g.Expect(got.Status.Phase).To(Equal(v1alpha1.OaatRunSucceeded))
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
	}, SpecTimeout(time.Minute))

	It("starts no run while the API server shows a live pod of the group that the cache does not", func(ctx SpecContext) {
		// The manager's cache never shows the pod named unseen, as a cache that lags does not show
		// a pod just created by someone else with the group's label (a previous leader, a user);
		// its own client reads the API server (the uncached list before each start).
		const unseen = "unseen"
		hide := func(c client.WithWatch) client.WithWatch {
			return interceptor.NewClient(c, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*corev1.Pod); ok && key.Name == unseen {
						return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if err := c.List(ctx, list, opts...); err != nil {
						return err
					}
					if pods, ok := list.(*corev1.PodList); ok {
						pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.Name == unseen })
					}
					return nil
				},
			})
		}
		stopManager()
		stopManager = startManagerWith(managerOptions{wrap: hide})

		By("creating a live pod with the group's label that the manager's cache does not show")
		create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: unseen, Namespace: ns,
				Labels: map[string]string{v1alpha1.LabelGroup: "blocked", labelTestPod: unseen},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: unseen, Image: "busybox"}}},
		})
		create(ctx, newOaatType(typeName), newGroup("blocked", "a"), newGroup("free", "a"))

		By("starting the other group's run, and none of the blocked group while the pod lives")
		markRunning(ctx, waitForLivePod(ctx, "free").Name)
		Consistently(func(g Gomega) {
			g.Expect(getGroup(ctx, g, "blocked").Status.CurrentRun).To(BeNil())
			live, err := livePodsOf(ctx, "blocked")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(podNames(live)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())

		By("starting the run once the pod has ended")
		updatePodStatus(ctx, unseen, func(pod *corev1.Pod) { pod.Status.Phase = corev1.PodSucceeded })
		pod := waitForLivePod(ctx, "blocked")
		Expect(getGroup(ctx, Default, "blocked").Status.CurrentRun).To(HaveField("PodName", pod.Name))
	}, SpecTimeout(time.Minute))

	It("creates pods as the leader of a leader election, checking its Lease before each", func(ctx SpecContext) {
		stopManager()
		stopManager = startManagerWith(managerOptions{leaseNamespace: ns})
		create(ctx, newOaatType(typeName), newGroup("led", "a", "b"))
		first := waitForLivePod(ctx, "led")
		lease := &coordinationv1.Lease{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: leaseName}, lease)).To(Succeed())
		Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		finishPod(ctx, first.Name, 0, "Completed")
		waitForLivePod(ctx, "led", first.Name)
	}, SpecTimeout(time.Minute))

	It("runs the valid items of a ConfigMap of a thousand over-long lines and says in a bounded message what it skipped", func(ctx SpecContext) {
		var lines []string
		for i := range 1000 {
			lines = append(lines, fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 295)))
		}
		lines = append(lines, "alpha", "beta", "gamma")
		Expect(lines[0]).To(HaveLen(300))
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: ns, Labels: map[string]string{labelItemSource: "true"}},
			Data:       map[string]string{"list": strings.Join(lines, "\n")},
		}
		group := newGroup("fromhuge")
		group.Spec.OaatItemsFrom = []v1alpha1.ItemsSource{{ConfigMap: &v1alpha1.ConfigMapItems{Name: "huge", Key: "list"}}}
		create(ctx, newOaatType(typeName), cm, group)

		var ran []string
		for range 3 {
			pod := waitForLivePod(ctx, "fromhuge", ran...)
			ran = append(ran, pod.Name)
			finishPod(ctx, pod.Name, 0, "Completed")
		}
		Eventually(func(g Gomega) {
			group := getGroup(ctx, g, "fromhuge")
			g.Expect(itemNames(group)).To(Equal([]string{"alpha", "beta", "gamma"}))
			for _, item := range []string{"alpha", "beta", "gamma"} {
				g.Expect(itemStatus(group, item).LastSuccess).NotTo(BeNil(), "item %s has not run", item)
			}
			expectCondition(g, group, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonReady)
			expectCondition(g, group, v1alpha1.ConditionItemsValid, metav1.ConditionFalse, v1alpha1.ReasonItemsSkipped)
			message := condition(group, v1alpha1.ConditionItemsValid).Message
			g.Expect(len(message)).To(BeNumerically("<=", 4096))
			g.Expect(message).To(ContainSubstring(`line 1 of key "list" of ConfigMap huge is 300 characters long`))
			g.Expect(message).To(HaveSuffix("and 995 more"))
		}).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			events := groupEvents(ctx, g, "fromhuge", v1alpha1.ReasonItemsSkipped)
			g.Expect(events).NotTo(BeEmpty())
			g.Expect(len(events[0].Note)).To(BeNumerically("<=", 1024))
		}).WithContext(ctx).Should(Succeed())
	}, SpecTimeout(time.Minute))
})
