//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// hostileItems are items that a shell or the kubelet's $(VAR) expansion would change or run if
// the operator or a template let them: each must reach the process exactly as written.
var hostileItems = []string{
	"/srv/photos",
	"a$(OAAT_ITEM)b",
	"$$(id)",
	`x"; touch /tmp/p; "`,
	"tab\there",
	"l" + strings.Repeat("0123456789abcdef", 15) + strings.Repeat("z", 12), // 253 characters
}

// newType returns an OaatType of the test's namespace whose item pods have spec, with
// restartPolicy Never unless spec sets one.
func newType(name string, spec corev1.PodSpec) *v1alpha1.OaatType {
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
	return support.Type(ns, name, spec)
}

// busybox is a container of the busybox image (docker.io/library/busybox through the node's
// registry) that runs script with sh -c, with the item as its first positional parameter.
var busybox = support.Busybox

// newGroup returns an OaatGroup of the test's namespace: each item once (frequency 1h).
func newGroup(name, oaatType string, items ...string) *v1alpha1.OaatGroup {
	return support.Group(ns, name, oaatType, items...).Obj()
}

// getGroup reads the group of the test's namespace; g is the Gomega of the caller (an
// Eventually's, which then retries).
func getGroup(ctx context.Context, g Gomega, name string) *v1alpha1.OaatGroup {
	group := &v1alpha1.OaatGroup{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, group)).To(Succeed())
	return group
}

func create(ctx context.Context, objs ...client.Object) {
	GinkgoHelper()
	for _, obj := range objs {
		Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "creating %T %s", obj, obj.GetName())
	}
}

// waitForOutcome waits until the item's run has ended and been recorded, and returns its status.
func waitForOutcome(ctx context.Context, group, item string, timeout time.Duration) v1alpha1.ItemStatus {
	GinkgoHelper()
	return waitForOutcomeIn(ctx, ns, group, item, timeout)
}

// waitForOutcomeIn is waitForOutcome for a group of another namespace than the test's.
func waitForOutcomeIn(ctx context.Context, namespace, group, item string, timeout time.Duration) v1alpha1.ItemStatus {
	GinkgoHelper()
	var status v1alpha1.ItemStatus
	Eventually(func(g Gomega) {
		og := &v1alpha1.OaatGroup{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: group}, og)).To(Succeed())
		it := support.ItemStatus(og, item)
		g.Expect(it).NotTo(BeNil(), "no status for item %q", item)
		g.Expect(it.LastSuccess != nil || it.LastFailure != nil).To(BeTrue(), "item %q has not ended a run", item)
		status = *it
	}).WithContext(ctx).WithTimeout(timeout).Should(Succeed())
	return status
}

// podLog reads what the pod's container printed, through the API server and the kubelet (as
// kubectl logs does).
func podLog(ctx context.Context, pod, container string) string {
	GinkgoHelper()
	out, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred(), "logs of pod %s container %s", pod, container)
	return string(out)
}

var _ = Describe("What an item's process receives", func() {
	It("is the item, exactly, through OAAT_ITEM and {{oaat_item}} in args and in env", func(ctx SpecContext) {
		container := busybox("main", `printf 'env=[%s]\n' "$OAAT_ITEM"; printf 'arg=[%s]\n' "$1"; `+
			`printf 'tplenv=[%s]\n' "$FROM_TEMPLATE"; if [ -e /tmp/p ]; then echo 'touched /tmp/p'; fi`)
		container.Env = []corev1.EnvVar{{Name: "FROM_TEMPLATE", Value: "{{oaat_item}}"}}
		create(ctx, newType("echo", corev1.PodSpec{Containers: []corev1.Container{container}}),
			newGroup("hostile", "echo", hostileItems...))
		for _, item := range hostileItems {
			status := waitForOutcome(ctx, "hostile", item, 2*time.Minute)
			Expect(status.LastSuccess).NotTo(BeNil(), "item %q: the run failed (%s, exit %v)", item, status.LastReason, status.LastExitCode)
			want := "env=[" + item + "]\narg=[" + item + "]\ntplenv=[" + item + "]\n"
			Expect(podLog(ctx, status.LastPodName, "main")).To(Equal(want), "what the container printed for item %q", item)
		}
	})

	It("is the item with the samples' OaatType, which never runs a command an item contains", func(ctx SpecContext) {
		sample := &v1alpha1.OaatType{}
		data, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "oaat_v1alpha1_oaattype.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(yaml.Unmarshal(data, sample)).To(Succeed())
		// The sample sleeps 5 to 15 s and exits 0 or 1 at random: either outcome is its own.
		create(ctx, newType(sample.Name, sample.Spec.Template.Spec), newGroup("sample", sample.Name, hostileItems...))
		for _, item := range hostileItems {
			status := waitForOutcome(ctx, "sample", item, 2*time.Minute)
			Expect(status.LastExitCode).NotTo(BeNil())
			Expect(*status.LastExitCode).To(BeElementOf(int32(0), int32(1)), "item %q", item)
			Expect(podLog(ctx, status.LastPodName, sample.Spec.Template.Spec.Containers[0].Name)).To(
				Equal("OAAT_ITEM="+item+"\n"), "what the sample printed for item %q", item)
		}
	})
})
