package integration

import (
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

const (
	// operatorServiceAccount is the name of the manager's ServiceAccount in every install.
	operatorServiceAccount = "oaat-operator-controller-manager"
	// historyPolicy names the policy of config/policy/oaatgrouphistory-writers.yaml and its binding.
	historyPolicy = "oaat-oaatgrouphistory-writers"
)

// The admission policy docs/security.md offers against the edit role OLM aggregates into the
// built-in edit for OaatGroupHistories: a user whom RBAC lets create and update records, as OLM's
// oaatgrouphistories.oaat.io-v1alpha1-edit does, is refused; a user of an admin role (verb '*'),
// and the operator's ServiceAccount, are not; a ServiceAccount of the operator's name that may
// not create TokenReviews is refused; deletions stay RBAC's.
var _ = Describe("The admission policy of config/policy on OaatGroupHistories", func() {
	It("lets only the operator and admins create or change a record", func(ctx SpecContext) {
		By("applying the policy with the command of docs/security.md")
		DeferCleanup(func(ctx SpecContext) {
			for _, obj := range []client.Object{
				&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: historyPolicy}},
				&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: historyPolicy}},
			} {
				Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed())
			}
		})
		runDocBlocks(ctx, filepath.Join("..", ".."), "history-policy", nil)
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: historyPolicy}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{})).To(Succeed())
		// The roles OLM makes for the CRD (tests/olminstall/userroles_test.go reads them).
		edit := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-history-edit"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"oaatgrouphistories"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
		admin := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-history-admin"}, Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"oaatgrouphistories"}, Verbs: []string{"*"}}}}
		// The operator's rights that the policy reads: records, and TokenReviews cluster-wide.
		operatorRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-history-operator"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"oaatgrouphistories"},
				Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}}}
		impostorNamespace := ns + "-tenant"
		bindings := []client.Object{
			roleBinding(edit.Name, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "carol"}),
			roleBinding(admin.Name, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "dave"}),
			// A tenant's ServiceAccount, named as the operator's, given edit in the namespace.
			roleBinding(edit.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: impostorNamespace, Name: operatorServiceAccount}),
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: operatorRole.Name},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: operatorRole.Name},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: operatorServiceAccount}}},
		}
		for _, obj := range append([]client.Object{edit, admin, operatorRole}, bindings...) {
			create(ctx, obj)
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
		}
		editor := impersonating("carol")
		historyAdmin := impersonating("dave")
		operator := impersonating("system:serviceaccount:"+ns+":"+operatorServiceAccount,
			"system:serviceaccounts", "system:serviceaccounts:"+ns)
		impostor := impersonating("system:serviceaccount:"+impostorNamespace+":"+operatorServiceAccount,
			"system:serviceaccounts", "system:serviceaccounts:"+impostorNamespace)
		denied := "OaatGroupHistories are written only by the operator and by admins"

		By("a user of the edit role may not create one (once the policy is in force; asked in dry runs, which admission sees too)")
		Eventually(func(g Gomega) {
			err := editor.Create(ctx, historyRecord("by-hand"), client.DryRunAll)
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "not refused: %v", err)
			g.Expect(err.Error()).To(ContainSubstring(denied + " (the verb import on oaatgrouphistories, which the admin roles grant): carol is neither"))
		}).WithContext(ctx).Should(Succeed())
		Expect(apierrors.IsForbidden(editor.Create(ctx, historyRecord("by-hand")))).To(BeTrue(), "carol created a record")
		err := impostor.Create(ctx, historyRecord("by-impostor"), client.DryRunAll)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a ServiceAccount of the operator's name without its rights created a record: %v", err)
		Expect(err.Error()).To(ContainSubstring(denied))

		By("the operator and an admin may; the editor may not change the admin's record, but may delete it")
		Expect(operator.Create(ctx, historyRecord("by-operator"), client.DryRunAll)).To(Succeed())
		record := historyRecord("by-admin")
		Expect(historyAdmin.Create(ctx, record)).To(Succeed())
		changed := record.DeepCopy()
		changed.Spec.RunCount = 99
		Expect(apierrors.IsForbidden(editor.Update(ctx, changed))).To(BeTrue(), "carol changed the record")
		Expect(operator.Update(ctx, changed, client.DryRunAll)).To(Succeed())
		Expect(editor.Delete(ctx, record)).To(Succeed())
	}, SpecTimeout(specTimeout))
})

// roleBinding binds the ClusterRole to the subject in the test's namespace.
func roleBinding(role string, subject rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: role + "-", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: []rbacv1.Subject{subject}}
}

// historyRecord is an OaatGroupHistory of the test's namespace, as a user would write it by hand.
func historyRecord(name string) *v1alpha1.OaatGroupHistory {
	deleted := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	return &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "by-hand", OaatType: typeName, RunCount: 1,
			DeletedAt: deleted, ExpiresAt: metav1.NewTime(deleted.Add(time.Hour)),
			Items: []v1alpha1.ItemHistory{{Name: "a", LastStarted: &deleted, LastSuccess: &deleted}}},
	}
}
