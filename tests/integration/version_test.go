package integration

import (
	"bytes"
	"os/exec"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// managerDeployment is a Deployment labelled as the operator's manager is (config/manager), of
// the given version; no controller runs it here.
func managerDeployment(name, version string) *appsv1.Deployment {
	labels := map[string]string{v1alpha1.LabelName: v1alpha1.NameValue, v1alpha1.LabelControlPlane: v1alpha1.ControlPlaneValue}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{v1alpha1.LabelVersion: version}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "quay.io/oaat-io/oaat-operator@sha256:" + strings.Repeat("0", 64)}}},
			},
		},
	}
	for k, v := range labels {
		d.Labels[k] = v
	}
	return d
}

// kubectlOaatVersion runs `kubectl oaat version -n ns` with the plugin buildKubectlOaat built and
// returns its stdout and stderr.
func kubectlOaatVersion(ctx SpecContext) (stdout, stderr string) {
	GinkgoHelper()
	plugin, kubeconfig := buildKubectlOaat()
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, plugin, "--kubeconfig", kubeconfig, "-n", ns, "version")
	cmd.Stdout, cmd.Stderr = &out, &errOut
	Expect(cmd.Run()).To(Succeed(), "kubectl oaat version: %s", errOut.String())
	return out.String(), errOut.String()
}

var _ = Describe("kubectl oaat version", func() {
	It("prints the plugin's version as make builds it and the operator's from its Deployment's label, and warns when their minor versions differ", func(ctx SpecContext) {
		version, err := support.MakefileVersion("../..")
		Expect(err).NotTo(HaveOccurred())
		revision, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
		Expect(err).NotTo(HaveOccurred())
		clientLine := "Client Version: " + version + " (revision " + strings.TrimSpace(string(revision)) + ", " + runtime.Version() + ")\n"

		By("an operator of the plugin's release")
		manager := managerDeployment("oaat-operator-controller-manager", version)
		create(ctx, manager)
		DeferCleanup(func(ctx SpecContext) {
			Expect(k8sClient.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns))).To(Succeed())
		})
		stdout, stderr := kubectlOaatVersion(ctx)
		Expect(stdout).To(Equal(clientLine + "Server Version: " + version + " (Deployment " + ns + "/oaat-operator-controller-manager)\n"))
		Expect(stderr).To(BeEmpty())

		By("an operator of another minor version beside it")
		create(ctx, managerDeployment("other-manager", "99.0.0"))
		stdout, stderr = kubectlOaatVersion(ctx)
		Expect(stdout).To(Equal(clientLine +
			"Server Version: " + version + " (Deployment " + ns + "/oaat-operator-controller-manager)\n" +
			"Server Version: 99.0.0 (Deployment " + ns + "/other-manager)\n"))
		Expect(stderr).To(ContainSubstring("WARNING: the plugin ("))
		Expect(stderr).To(ContainSubstring(") and the operator of Deployment " + ns + "/other-manager (99.0) differ in their minor version"))
	}, SpecTimeout(6*time.Minute))
})
