//go:build olminstall

package olminstall

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// historyPolicyFile is the admission policy docs/security.md offers against OLM's edit role on
// OaatGroupHistories.
var historyPolicyFile = filepath.Join("config", "policy", "oaatgrouphistory-writers.yaml")

// expectHistoryPolicy checks what docs/security.md says of OaatGroupHistories under OLM: bound
// to the built-in edit in a namespace, a user may create records there (expectUserRoles asks
// the API server); with the admission policy applied, that user is refused, while a user bound to
// the built-in admin there and the operator's ServiceAccount are not. The policy stays until the
// install mode's end, so the manager that runs next writes its records under it.
func expectHistoryPolicy(ctx context.Context, m installMode, saName string) {
	GinkgoHelper()
	ns := m.WorkNamespaces[0]
	By("applying " + historyPolicyFile + ": only the operator and admins may write OaatGroupHistories in " + ns)
	out, err := kubectl(ctx, nil, "apply", "-f", historyPolicyFile)
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	DeferCleanup(func(ctx SpecContext) {
		out, err := kubectl(ctx, nil, "delete", "--ignore-not-found", "-f", historyPolicyFile)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
	})
	as := func(user string) client.Client {
		cfg := rest.CopyConfig(adminCfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
		c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	record := func(name string) *v1alpha1.OaatGroupHistory {
		deleted := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		return &v1alpha1.OaatGroupHistory{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "by-hand", OaatType: "backup", RunCount: 1,
				DeletedAt: deleted, ExpiresAt: metav1.NewTime(deleted.Add(time.Hour)),
				Items: []v1alpha1.ItemHistory{{Name: "a", LastStarted: &deleted, LastSuccess: &deleted}}},
		}
	}
	editor := "tenant-edit-" + m.Name
	Eventually(func(g Gomega) {
		err := as(editor).Create(ctx, record("by-editor"), client.DryRunAll)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "bound to edit in %s, %s created an OaatGroupHistory: %v", ns, editor, err)
		g.Expect(err.Error()).To(ContainSubstring("OaatGroupHistories are written only by the operator and by admins"))
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	Expect(as("tenant-admin-"+m.Name).Create(ctx, record("by-admin"), client.DryRunAll)).To(Succeed(),
		"bound to admin in %s, a user may create an OaatGroupHistory", ns)
	operator := "system:serviceaccount:" + m.InstallNamespace + ":" + saName
	Expect(as(operator).Create(ctx, record("by-operator"), client.DryRunAll)).To(Succeed(),
		"the operator's ServiceAccount may create an OaatGroupHistory in %s", ns)
}
