//go:build olminstall

package olminstall

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What docs/security.md says users get on ClusterOaatLocks through OLM, checked on the roles this
// OLM makes for the CSV's CRDs: whoever is bound to the built-in edit or admin role in a namespace
// (a RoleBinding) may not write a ClusterOaatLock, since a RoleBinding grants nothing on a
// cluster-scoped kind, yet may write the namespaced kinds there; whoever is bound to edit or admin
// cluster-wide (a ClusterRoleBinding) may write ClusterOaatLocks, and so widen a namespaceSelector,
// because the roles OLM makes are aggregated into the built-in ones.

// lockWrites are the writes of a ClusterOaatLock that widen or take over a grant.
var lockWrites = []string{"create", "update", "patch", "delete"}

// expectUserRoles binds the built-in edit and admin roles to users, in a work namespace and
// cluster-wide, and asks the API server what each may do with the operator's kinds.
func expectUserRoles(ctx context.Context, m installMode) {
	GinkgoHelper()
	ns := m.WorkNamespaces[0]
	By("checking what the built-in edit and admin roles grant on the operator's kinds, bound in " + ns + " and cluster-wide")
	rbac := clientset.RbacV1()
	users := map[string]string{}
	for _, role := range []string{"edit", "admin"} {
		inNamespace, clusterWide := "tenant-"+role+"-"+m.Name, "cluster-"+role+"-"+m.Name
		users[role+" in "+ns], users[role+" cluster-wide"] = inNamespace, clusterWide
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: inNamespace, Namespace: ns}, RoleRef: ref,
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: inNamespace}}}
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterWide}, RoleRef: ref,
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: clusterWide}}}
		_, err := rbac.RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = rbac.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			Expect(rbac.RoleBindings(ns).Delete(ctx, rb.Name, metav1.DeleteOptions{})).To(Succeed())
			Expect(rbac.ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{})).To(Succeed())
		})
	}
	allowed := func(g Gomega, user, namespace, resource, verb string) bool {
		sar := subjectAccessReview(user, []string{"system:authenticated"}, namespace, "oaat.io", resource, "", verb)
		review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return review.Status.Allowed
	}

	// OLM makes its roles once the CSV has succeeded, and kube-controller-manager aggregates them
	// into the built-in ones a moment later: wait for the namespaced kinds first.
	Eventually(func(g Gomega) {
		for _, role := range []string{"edit", "admin"} {
			// OaatGroupHistories too, though the project ships no editor role for them: OLM makes
			// one for every owned CRD (docs/security.md#oaatgrouphistories).
			for _, resource := range []string{"oaatgroups", "oaattypes", "oaatruns", "oaatlocks", "oaatgrouphistories"} {
				g.Expect(allowed(g, users[role+" in "+ns], ns, resource, "create")).To(BeTrue(),
					"a user bound to %s in %s may not create %s there", role, ns, resource)
			}
		}
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "OLM's roles for the CRDs: %s", olmRolesOf(ctx, "clusteroaatlocks"))

	var wrong []string
	for _, role := range []string{"edit", "admin"} {
		for _, verb := range lockWrites {
			if allowed(Default, users[role+" in "+ns], "", "clusteroaatlocks", verb) {
				wrong = append(wrong, fmt.Sprintf("bound to %s in %s, a user may %s ClusterOaatLocks", role, ns, verb))
			}
			if !allowed(Default, users[role+" cluster-wide"], "", "clusteroaatlocks", verb) {
				wrong = append(wrong, fmt.Sprintf("bound to %s cluster-wide, a user may not %s ClusterOaatLocks (docs/security.md says it may)", role, verb))
			}
		}
	}
	report := olmRolesOf(ctx, "clusteroaatlocks")
	AddReportEntry(m.Name+": OLM's roles that grant ClusterOaatLocks", report)
	Expect(wrong).To(BeEmpty(), "OLM's roles for the CRDs: %s", report)
}

// olmRolesOf describes the ClusterRoles that grant a verb on the resource of oaat.io, with their
// aggregation labels.
func olmRolesOf(ctx context.Context, resource string) string {
	roles, err := clientset.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, r := range roles.Items {
		var verbs []string
		for _, rule := range r.Rules {
			if slices.Contains(rule.APIGroups, "oaat.io") && (slices.Contains(rule.Resources, resource) || slices.Contains(rule.Resources, "*")) {
				verbs = append(verbs, rule.Verbs...)
			}
		}
		if len(verbs) == 0 {
			continue
		}
		var aggregates []string
		for k, v := range r.Labels {
			if strings.Contains(k, "aggregate-to") {
				aggregates = append(aggregates, k+"="+v)
			}
		}
		slices.Sort(aggregates)
		out = append(out, fmt.Sprintf("%s (%s; %s)", r.Name, strings.Join(verbs, ","), strings.Join(aggregates, ",")))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}
