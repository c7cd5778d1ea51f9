//go:build realnode

package realnode

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The console transcripts of docs/pvc-backup.md (support.TranscriptPages) are made here, on the
// real node, whose kubelet mounts the claims and runs the sample's busybox: in namespace backups,
// as the page says, its commands run as the page shows them, with kubectl and the kubectl-oaat
// plugin, as the cluster's admin. With WRITE_TRANSCRIPTS=1 (make docs-transcripts-realnode) the
// outputs replace the blocks; otherwise each block must match, ages aside
// (support.NormaliseTranscript). Each spec makes some of the page's transcripts
// (CheckSomeTranscripts): this one the claims as items, restic_test.go the restic walkthrough.

// backupsNamespace is the namespace of docs/pvc-backup.md's commands.
const backupsNamespace = "backups"

var _ = Describe("docs/pvc-backup.md's transcripts", func() {
	It("are what their commands print on the real node, ages aside", SpecTimeout(5*time.Minute), func(ctx SpecContext) {
		pages, err := support.TranscriptPages(repoRoot, "tests/realnode")
		Expect(err).NotTo(HaveOccurred())
		dir, runner, run := pageSpec(ctx, docBin(true), backupsNamespace, "data-web", "data-db", "data-mail", "scratch", "backup-target")
		outputs := map[string]string{}
		const group = "pvc-backup"
		items := func(g Gomega) []string {
			og := &v1alpha1.OaatGroup{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, og)).To(Succeed())
			var names []string
			for _, it := range og.Status.Items {
				names = append(names, it.Name)
			}
			return names
		}
		succeeded := func(item string) {
			GinkgoHelper()
			status := waitForOutcome(ctx, group, item, 2*time.Minute)
			Expect(status.LastSuccess).NotTo(BeNil(), "item %s: the run failed (%s, exit %v)", item, status.LastReason, status.LastExitCode)
		}

		By("labelling two claims and applying the sample: both are backed up, one after the other")
		block := &support.Transcript{Runner: runner}
		run(block, "kubectl -n backups label pvc data-web data-db backup=nightly")
		run(block, "kubectl -n backups apply -f config/samples/oaat_v1alpha1_pvc_backup.yaml")
		Eventually(items).WithContext(ctx).WithTimeout(30 * time.Second).Should(Equal([]string{"data-db", "data-web"}))
		run(block, "kubectl -n backups get oaatgroup pvc-backup -o jsonpath='{.status.items[*].name}'")
		succeeded("data-db")
		succeeded("data-web")
		run(block, "kubectl oaat -n backups status pvc-backup")
		outputs["pvc-backup-labelled"] = block.String()

		By("labelling a third claim: it is backed up too")
		block = &support.Transcript{Runner: runner}
		run(block, "kubectl -n backups label pvc data-mail backup=nightly")
		succeeded("data-mail")
		run(block, "kubectl oaat -n backups status pvc-backup")
		// By the pod's labels: its name has the group's run number, which depends on which of the
		// first two claims ran first, the schedule's random tie-break.
		run(block, "kubectl -n backups logs -l oaat.io/group=pvc-backup,oaat.io/item=data-web")
		outputs["pvc-backup-label-more"] = block.String()
		entries, err := os.ReadDir(filepath.Join(dir, "backup-target"))
		Expect(err).NotTo(HaveOccurred())
		var archives []string
		for _, e := range entries {
			archives = append(archives, e.Name())
		}
		Expect(archives).To(Equal([]string{"data-db.tar.gz", "data-mail.tar.gz", "data-web.tar.gz"}), "what the runs wrote into backup-target")
		for _, rec := range tracker.PodsOf(ns, group) {
			Expect(rec.Item).NotTo(Equal("scratch"), "pod %s ran the unlabelled claim", rec.Name)
		}

		By("removing the label of the third claim: it leaves the group, its pod with it")
		block = &support.Transcript{Runner: runner}
		run(block, "kubectl -n backups label pvc data-mail backup-")
		Eventually(items).WithContext(ctx).WithTimeout(30 * time.Second).Should(Equal([]string{"data-db", "data-web"}))
		Eventually(func(g Gomega) {
			pods := &corev1.PodList{}
			g.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelGroup: group})).To(Succeed())
			var left []string
			for _, p := range pods.Items {
				left = append(left, p.Annotations[v1alpha1.AnnotationItem])
			}
			slices.Sort(left)
			g.Expect(left).To(Equal([]string{"data-db", "data-web"}), "the pods of the group's items")
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		run(block, "kubectl oaat -n backups status pvc-backup")
		outputs["pvc-backup-unlabelled"] = block.String()

		By("adding an item that makes no valid claim name: it is skipped, with an event")
		block = &support.Transcript{Runner: runner}
		run(block, `kubectl -n backups patch oaatgroup pvc-backup --type merge -p '{"spec":{"oaatItems":["/srv/photos"]}}'`)
		Eventually(func(g Gomega) {
			events, err := clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=" + string(v1alpha1.ReasonItemsSkipped)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(events.Items).NotTo(BeEmpty())
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		run(block, "kubectl -n backups get events --field-selector reason=ItemsSkipped")
		outputs["pvc-backup-skipped"] = block.String()

		stale, err := support.CheckSomeTranscripts(repoRoot, pages, outputs, os.Getenv("WRITE_TRANSCRIPTS") == "1")
		Expect(err).NotTo(HaveOccurred())
		Expect(stale).To(BeEmpty(), "the transcripts of docs/pvc-backup.md differ from what their commands print "+
			"(`make docs-transcripts-realnode` writes them):\n%s", strings.Join(stale, "\n"))
	})
})

// pageSpec sets up a spec of a page's transcripts: the page's namespace (useNamespace) with a
// bound hostPath claim of each name, their volumes under dir (removed after the spec), and the
// runner of the page's commands, the plugin of bin's as the cluster's admin; run runs one line of
// a block and fails the spec when the command does.
func pageSpec(ctx context.Context, bin, namespace string, claims ...string) (
	dir string, runner support.TranscriptRunner, run func(block *support.Transcript, line string),
) {
	GinkgoHelper()
	useNamespace(ctx, namespace)
	dir = filepath.Join(cluster.StateDir, "volumes", namespace)
	DeferCleanup(func() { Expect(os.RemoveAll(dir)).To(Succeed()) })
	for _, name := range claims {
		hostPathClaim(ctx, dir, "oaat-realnode-"+namespace, name, nil)
	}
	expectClaimsBound(ctx, len(claims))
	runner = support.TranscriptRunner{Kubectl: os.Getenv("KUBECTL"), KubectlOaat: filepath.Join(bin, "kubectl-oaat"),
		Dir: repoRoot, Env: []string{"KUBECONFIG=" + adminKubeconfig}}
	run = func(block *support.Transcript, line string) {
		GinkgoHelper()
		Expect(block.Run(ctx, line)).To(Succeed())
	}
	return dir, runner, run
}

// useNamespace makes name the test's namespace, ns, until the test ends, when it and its groups
// are deleted: for the pages' commands, which name theirs.
func useNamespace(ctx context.Context, name string) {
	GinkgoHelper()
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelSuite: "true"}}}
	Expect(k8sClient.Create(ctx, namespace)).To(Succeed())
	suiteNamespace := ns
	ns = name
	DeferCleanup(func(ctx SpecContext) {
		ns = suiteNamespace
		Expect(tracker.OverlapsIn(name)).To(BeEmpty(), "two live pods of a group at once:\n%s", tracker.Describe(name))
		Expect(k8sClient.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(name))).To(Succeed())
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, namespace))).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(namespace), &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace %s still exists (%v)", name, err)
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	})
	Eventually(func() error {
		_, err := clientset.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "the default ServiceAccount of %s", name)
}
