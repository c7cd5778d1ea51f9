package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// lockWritersGroup is the group config/policy/clusteroaatlock-writers.yaml lets write
// ClusterOaatLocks.
const lockWritersGroup = "oaat.io:clusteroaatlock-admins"

// The admission policy docs/security.md offers against the roles OLM aggregates into the built-in
// edit and admin: a user whom RBAC allows to write ClusterOaatLocks (as edit bound cluster-wide
// does under OLM) is refused unless a member of lockWritersGroup, and the operator's writes of a
// lock's status are not concerned.
var _ = Describe("The admission policy of config/policy", func() {
	It("lets only members of the ClusterOaatLock admins' group write ClusterOaatLocks", func(ctx SpecContext) {
		applyManifests(ctx, filepath.Join("..", "..", "config", "policy", "clusteroaatlock-writers.yaml"))
		// Every user of the group team-editors may write ClusterOaatLocks, as far as RBAC goes.
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-lock-writer"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"clusteroaatlocks", "clusteroaatlocks/status"},
			Verbs: []string{"get", "create", "update", "patch", "delete"}}}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-lock-writer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-editors"}}}
		create(ctx, role, binding)
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8sClient.Delete(ctx, binding)).To(Succeed())
			Expect(k8sClient.Delete(ctx, role)).To(Succeed())
		})
		editor := impersonating("alice", "team-editors")
		lockAdmin := impersonating("bob", "team-editors", lockWritersGroup)

		lock := func() *v1alpha1.ClusterOaatLock {
			return support.ClusterLock(ns+"-policy", 1, map[string]string{labelTeam: "backup"})
		}
		By("a user RBAC allows, outside the group, may not create one (once the policy is in force; asked in dry runs, which admission sees too)")
		Eventually(func(g Gomega) {
			err := editor.Create(ctx, lock(), client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "not refused: %v", err)
			g.Expect(err.Error()).To(ContainSubstring("ClusterOaatLocks are written only by members of the group " + lockWritersGroup + ": alice is not one"))
		}).WithContext(ctx).Should(Succeed())

		Expect(apierrors.IsForbidden(editor.Create(ctx, lock()))).To(BeTrue(), "alice created the lock")

		By("a member of the group may; the other user may neither widen its selector nor delete it")
		created := lock()
		Expect(lockAdmin.Create(ctx, created)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, created))).To(Succeed()) })
		widened := created.DeepCopy()
		widened.Spec.NamespaceSelector = &metav1.LabelSelector{}
		// A patch, without the resourceVersion: the lock's reconciler writes its status at once,
		// and an update of the created version would meet a Conflict, which the API server
		// reports before admission sees the request.
		err := editor.Patch(ctx, widened, client.MergeFrom(created))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "alice widened the lock's namespaceSelector: %v", err)
		Expect(apierrors.IsForbidden(editor.Delete(ctx, created))).To(BeTrue(), "alice deleted the lock")

		By("the lock's status, which the operator writes, is not the policy's concern")
		// Read again at each conflict: the lock's reconciler writes the status too.
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := editor.Get(ctx, client.ObjectKeyFromObject(created), created); err != nil {
				return err
			}
			created.Status.WaitingGroups = 1
			return editor.Status().Update(ctx, created)
		})).To(Succeed())
		Expect(lockAdmin.Delete(ctx, created)).To(Succeed())
	}, SpecTimeout(specTimeout))
})

// impersonating is a client of the API server acting as the user, of the groups.
func impersonating(user string, groups ...string) client.Client {
	GinkgoHelper()
	config := rest.CopyConfig(cfg)
	config.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	c, err := client.New(config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// applyManifests creates every object of a YAML file of several documents, and deletes them when
// the test ends.
func applyManifests(ctx context.Context, path string) {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return
		}
		Expect(err).NotTo(HaveOccurred())
		if len(obj.Object) == 0 {
			continue
		}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "creating %s %s", obj.GetKind(), obj.GetName())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
	}
}
