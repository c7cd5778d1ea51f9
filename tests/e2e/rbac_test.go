//go:build e2e

package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// operatorGroups are the groups the operator's ServiceAccount token authenticates with.
var operatorGroups = []string{
	"system:serviceaccounts", "system:serviceaccounts:" + operatorNamespace, "system:authenticated",
}

var _ = Describe("Permissions of the operator", func() {
	// The scenarios show that the operator can do its job with the permissions of config/rbac on
	// this cluster (and the suite fails if its log reports a refused request). This test covers what
	// this cluster does not enforce: item pods carry an owner reference to their group with
	// blockOwnerDeletion: true (internal/podbuild/pod.go), and an API server that runs the
	// OwnerReferencesPermissionEnforcement admission plugin (OpenShift does; the local cluster does
	// not) refuses such a pod unless its creator may update the owner's finalizers subresource.
	It("grants every permission the operator's requests need, in a test namespace and its own", func(ctx SpecContext) {
		type need struct {
			namespace, group, resource, subresource, verb, why string
		}
		needs := []need{
			{ns, "", "pods", "", "create", "item pods"},
			{ns, "", "pods", "", "delete", "rogue and superseded pods"},
			{ns, "", "pods", "", "list", "the pod cache"},
			{ns, "", "pods", "", "watch", "the pod cache"},
			{ns, "", "pods", "", "get", "confirming the current run's pod"},
			{ns, "oaat.io", "oaatgroups", "", "list", "the group cache"},
			{ns, "oaat.io", "oaatgroups", "", "watch", "the group cache"},
			{ns, "oaat.io", "oaatgroups", "", "get", "reading a group again"},
			{ns, "oaat.io", "oaatgroups", "status", "update", "status writes"},
			{ns, "oaat.io", "oaattypes", "", "list", "the OaatType cache"},
			{ns, "oaat.io", "oaattypes", "", "watch", "the OaatType cache"},
			{ns, "events.k8s.io", "events", "", "create", "events about groups"},
			{ns, "events.k8s.io", "events", "", "patch", "event series"},
			{ns, "oaat.io", "oaatgroups", "finalizers", "update",
				"blockOwnerDeletion: true in the owner reference of item pods, under OwnerReferencesPermissionEnforcement"},
			{operatorNamespace, "coordination.k8s.io", "leases", "", "create", "leader election"},
		}
		// Leader election reads and renews the operator's own Lease only: config/rbac grants get
		// and update on that name.
		leaseByName := []need{
			{operatorNamespace, "coordination.k8s.io", "leases", "", "get", "leader election"},
			{operatorNamespace, "coordination.k8s.io", "leases", "", "update", "leader election"},
		}
		var denied []string
		for i, n := range append(needs, leaseByName...) {
			name := ""
			if i >= len(needs) {
				name = v1alpha1.LeaderElectionID
			}
			review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{
					User:   operatorUser,
					Groups: operatorGroups,
					ResourceAttributes: &authorizationv1.ResourceAttributes{
						Namespace: n.namespace, Group: n.group, Resource: n.resource,
						Subresource: n.subresource, Verb: n.verb, Name: name,
					},
				},
			}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			if !review.Status.Allowed {
				resource := n.resource
				if n.subresource != "" {
					resource += "/" + n.subresource
				}
				if n.group != "" {
					resource += "." + n.group
				}
				denied = append(denied, fmt.Sprintf("%s %s in namespace %s (needed for %s)", n.verb, resource, n.namespace, n.why))
			}
		}
		Expect(denied).To(BeEmpty(), "permissions config/rbac does not grant the operator (%s)", operatorUser)
	})
})
