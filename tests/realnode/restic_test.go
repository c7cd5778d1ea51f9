//go:build realnode

package realnode

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// The restic walkthrough of docs/pvc-backup.md ("Verified backups with restic"): the sample
// config/samples/oaat_v1alpha1_restic.yaml backs up three claims with restic, the image of
// Debian's restic (hack/images), into a repository on a claim of its own, and verifies each
// backup by restoring it and comparing checksums with the data this test wrote; then the test
// damages the repository, and a backup that succeeds fails its verification only, which fires
// OaatVerificationFailing in a Prometheus evaluating the bundle's rules. The page's commands run
// as it shows them (support.Transcript); the runbooks' commands of the verification alerts
// (checked-by: tests/realnode verification) run on the failed item.

// resticNamespace, resticGroup: the page's namespace and the sample's group.
const (
	resticNamespace = "restic"
	resticGroup     = "restic"
)

// resticClaims are the claims the walkthrough backs up.
var resticClaims = []string{"data-db", "data-mail", "data-web"}

var _ = Describe("docs/pvc-backup.md's transcripts", func() {
	It("restic: each claim backed up and verified by restore-and-compare; a damaged repository fails the verification only, and its alert fires",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			pages, err := support.TranscriptPages(repoRoot, "tests/realnode")
			Expect(err).NotTo(HaveOccurred())
			bin := docBin(true)
			dir, runner, run := pageSpec(ctx, bin, resticNamespace, append(slices.Clone(resticClaims), "restic-repo")...)
			files := map[string]int{}
			for _, name := range resticClaims {
				files[name] = writeClaimData(filepath.Join(dir, name))
			}
			outputs := map[string]string{}

			By("creating the Secret, labelling the claims and applying the sample: each claim backed up, then verified")
			block := &support.Transcript{Runner: runner}
			run(block, "kubectl -n restic create secret generic restic-password --from-literal=password="+resticPassword)
			run(block, "kubectl -n restic label pvc data-web data-db data-mail backup=restic")
			run(block, "kubectl -n restic apply -f config/samples/oaat_v1alpha1_restic.yaml")
			verified := waitForVerifications(ctx, func(g Gomega, it *v1alpha1.ItemStatus) {
				g.Expect(it.LastVerified).NotTo(BeNil(), "item %s not verified yet", it.Name)
			})
			for _, it := range verified.Status.Items {
				Expect(it.LastSuccess).NotTo(BeNil())
				Expect(it.VerifiedRunFinishedAt).To(Equal(it.LastSuccess), "item %s: the verification verified its last backup", it.Name)
				Expect(it.LastFailure).To(BeNil(), "item %s", it.Name)
				Expect(verificationLog(ctx, it.Name)).To(Equal(
					"restored "+it.Name+": "+strconv.Itoa(files[it.Name])+" files, each as written\n"), "item %s: what its verification compared", it.Name)
			}
			run(block, "kubectl oaat -n restic status restic")
			run(block, "kubectl -n restic logs -l oaat.io/group=restic,oaat.io/item=data-web,oaat.io/purpose=Verify")
			outputs["restic-verified"] = block.String()

			baseURL := startRulesPrometheus(ctx)

			By("damaging the repository and backing up data-web again: the backup succeeds, its verification fails")
			damageRepository(filepath.Join(dir, "restic-repo"))
			before := support.ItemStatus(verified, "data-web")
			block = &support.Transcript{Runner: runner}
			run(block, "kubectl oaat -n restic run restic data-web")
			failed := waitForVerifications(ctx, func(g Gomega, it *v1alpha1.ItemStatus) {
				if it.Name == "data-web" {
					g.Expect(it.VerificationFailing()).To(BeTrue(), "data-web's verification has not failed yet")
				}
			})
			web := support.ItemStatus(failed, "data-web")
			Expect(web.LastSuccess.After(before.LastSuccess.Time)).To(BeTrue(), "data-web was backed up again")
			Expect(web.LastFailure).To(BeNil(), "a failed verification is not a failure of the run")
			Expect(web.FailureCount).To(BeZero())
			Expect(web.VerifiedRunFinishedAt).To(Equal(before.VerifiedRunFinishedAt), "the newest verified backup is still the first")
			Expect(web.WaitReason).To(Equal(v1alpha1.WaitCoolingOff), "RerunItem: due again after failureCoolOff")
			for _, it := range failed.Status.Items {
				Expect(it.VerificationFailing()).To(Equal(it.Name == "data-web"), "item %s", it.Name)
			}
			condition := meta.FindStatusCondition(failed.Status.Conditions, v1alpha1.ConditionVerified)
			Expect(condition).NotTo(BeNil())
			Expect(condition.Status).To(Equal(metav1.ConditionFalse))
			Expect(condition.Message).To(ContainSubstring("data-web"))
			run(block, "kubectl -n restic get events --field-selector reason=VerificationFailed")
			run(block, "kubectl oaat -n restic status restic")
			outputs["restic-corrupted"] = block.String()

			By("Prometheus firing OaatVerificationFailing for data-web alone")
			Eventually(func(g Gomega) {
				firing, err := support.QueryPrometheus(ctx, baseURL, `ALERTS{alertname="OaatVerificationFailing",alertstate="firing"}`)
				g.Expect(err).NotTo(HaveOccurred())
				var items []string
				for _, s := range firing {
					items = append(items, s.Metric["namespace"]+"/"+s.Metric["group"]+"/"+s.Metric["item"])
				}
				g.Expect(items).To(Equal([]string{"restic/restic/data-web"}))
			}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

			By("running the verification runbooks' commands on the group")
			out := runDocBlocks(ctx, bin, "verification", map[string]string{"NAMESPACE": resticNamespace, "GROUP": resticGroup})
			Expect(out).To(ContainSubstring("FAILED"), "kubectl oaat status: the VERIFIED column")
			Expect(out).To(ContainSubstring("The newest verification failed for 1 items: data-web"), "condition Verified")
			Expect(out).To(ContainSubstring("VerificationFailed"), "the event")
			Expect(out).To(ContainSubstring(`"oaatType":"restic-verify"`), "spec.verify")

			stale, err := support.CheckSomeTranscripts(repoRoot, pages, outputs, os.Getenv("WRITE_TRANSCRIPTS") == "1")
			Expect(err).NotTo(HaveOccurred())
			Expect(stale).To(BeEmpty(), "the transcripts of docs/pvc-backup.md differ from what their commands print "+
				"(`make docs-transcripts-realnode` writes them):\n%s", strings.Join(stale, "\n"))
		})
})

// writeClaimData writes a few files of random content into the claim's directory (one in a
// subdirectory, one empty) and returns how many.
func writeClaimData(dir string) int {
	GinkgoHelper()
	Expect(os.MkdirAll(filepath.Join(dir, "sub"), 0o755)).To(Succeed())
	sizes := map[string]int{"index.html": 4 << 10, "sub/blob.bin": 300 << 10, "empty": 0}
	for name, size := range sizes {
		data := make([]byte, size)
		_, err := rand.Read(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, name), data, 0o644)).To(Succeed())
	}
	return len(sizes)
}

// resticPassword is the repository's password, in the Secret the page creates.
const resticPassword = "correct-horse-battery-staple"

// damageRepository overwrites 16 bytes in every 4 KiB of each pack of the restic repository at
// dir that holds file contents (data blobs) alone, as a failing disk would: every blob of a few
// KiB or more is hit wherever the pack placed it. The packs of trees are left whole: a backup
// reads its parent snapshot's trees (a damaged tree fails the backup, exit code 3), and takes the
// contents of unchanged files from the index without reading them, so the backup succeeds and
// the restore of its snapshot fails. Which pack holds which blobs comes from the repository's
// index, read with Debian's restic (make image-packages installs it).
func damageRepository(dir string) {
	GinkgoHelper()
	restic := func(args ...string) []byte {
		GinkgoHelper()
		cmd := exec.Command("restic", append([]string{"--repo", dir, "--no-lock", "--no-cache", "--quiet"}, args...)...)
		cmd.Env = append(os.Environ(), "RESTIC_PASSWORD="+resticPassword)
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "restic %s", strings.Join(args, " "))
		return out
	}
	var damaged int
	for _, index := range strings.Fields(string(restic("list", "index"))) {
		var contents resticIndex
		Expect(json.Unmarshal(restic("cat", "index", index), &contents)).To(Succeed())
		for _, pack := range contents.Packs {
			if !pack.contentsOnly() {
				continue
			}
			damagePack(filepath.Join(dir, "data", pack.ID[:2], pack.ID))
			damaged++
		}
	}
	Expect(damaged).To(BeNumerically(">", 0), "the repository has no pack of file contents")
}

// resticIndex is what `restic cat index` prints of an index file: its packs and their blobs.
type resticIndex struct {
	Packs []resticPack `json:"packs"`
}

type resticPack struct {
	ID    string `json:"id"`
	Blobs []struct {
		Type string `json:"type"` // data (a file's contents) or tree (a directory)
	} `json:"blobs"`
}

// contentsOnly says whether the pack holds data blobs alone.
func (p resticPack) contentsOnly() bool {
	for _, blob := range p.Blobs {
		if blob.Type != "data" {
			return false
		}
	}
	return len(p.Blobs) > 0
}

// damagePack overwrites 16 bytes in every 4 KiB of the file at path, after its first 40.
func damagePack(path string) {
	GinkgoHelper()
	info, err := os.Stat(path)
	Expect(err).NotTo(HaveOccurred())
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(f.Close()).To(Succeed()) }()
	sum := sha256.Sum256([]byte(path))
	noise := []byte(hex.EncodeToString(sum[:8]))
	for at := int64(40); at+int64(len(noise)) <= info.Size(); at += 4 << 10 {
		_, err := f.WriteAt(noise, at)
		Expect(err).NotTo(HaveOccurred())
	}
}

// waitForVerifications waits until no run or verification of the group is running or pending
// and each item passes check, and returns the group.
func waitForVerifications(ctx context.Context, check func(g Gomega, it *v1alpha1.ItemStatus)) *v1alpha1.OaatGroup {
	GinkgoHelper()
	og := &v1alpha1.OaatGroup{}
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: resticGroup}, og)).To(Succeed())
		var items []string
		for i := range og.Status.Items {
			items = append(items, og.Status.Items[i].Name)
			check(g, &og.Status.Items[i])
		}
		g.Expect(items).To(Equal(resticClaims))
		g.Expect(og.Status.CurrentRun).To(BeNil(), "a run or verification is running")
		g.Expect(og.Status.PendingVerification).To(BeNil(), "a verification is pending")
	}).WithContext(ctx).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return og
}

// verificationLog is what the verification pod of the item printed.
func verificationLog(ctx context.Context, item string) string {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{
		v1alpha1.LabelGroup: resticGroup, v1alpha1.LabelItem: item, v1alpha1.LabelPurpose: string(v1alpha1.PurposeVerify),
	})).To(Succeed())
	Expect(pods.Items).To(HaveLen(1), "the verification pod of item %s", item)
	Expect(pods.Items[0].Status.Phase).To(Equal(corev1.PodSucceeded), "the verification pod of item %s", item)
	return podLog(ctx, pods.Items[0].Name, "verify")
}

// startRulesPrometheus runs Debian's Prometheus scraping the operator's metrics endpoints with the
// bundle's rules, their times divided by support.AlertScale (as the end-to-end suite's alerting
// path has them), until the test ends, and returns its base URL. Its job adds no label, so that
// the series keep the groups' namespaces.
func startRulesPrometheus(ctx context.Context) string {
	GinkgoHelper()
	binary, err := support.PrometheusBinary()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(cluster.StateDir, "prometheus-rules")
	Expect(os.RemoveAll(dir)).To(Succeed())
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "config", "prometheus", "alerts.yaml"))
	Expect(err).NotTo(HaveOccurred())
	rules, err := support.ScaleRules(manifest, support.AlertScale)
	Expect(err).NotTo(HaveOccurred())
	ruleFile := filepath.Join(dir, "rules.yaml")
	Expect(os.WriteFile(ruleFile, rules, 0o644)).To(Succeed())
	logPath := filepath.Join(cluster.StateDir, "logs", "prometheus-rules.log")
	proc, baseURL, err := support.StartAlertingPrometheus(binary, dir, logPath, scraperToken(ctx), support.ScrapeJob{
		Name: scrapeJob, Targets: serviceEndpoints(ctx, operatorNamespace, metricsService),
	}, support.Alerting{RuleFile: ruleFile}, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(proc.Stop(30 * time.Second)).To(Succeed()) })
	Eventually(func(g Gomega) {
		g.Expect(proc.UnexpectedExit(20)).To(Succeed())
		// Every replica reports the gauges from its cache (the alerts take their max by item).
		up, err := support.QueryPrometheus(ctx, baseURL,
			`max by (namespace, group, item) (oaat_item_verification_failing{namespace="`+resticNamespace+`"})`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(up).To(HaveLen(len(resticClaims)), "the gauges of the group's items")
	}).WithContext(ctx).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Succeed(),
		"Prometheus never scraped the group's gauges; log %s", logPath)
	return baseURL
}
