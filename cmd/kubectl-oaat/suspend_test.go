package main

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// suspendOf reads spec.suspend of the group name in ns.
func suspendOf(t *testing.T, ns, name string) bool {
	t.Helper()
	g := &v1alpha1.OaatGroup{}
	if err := k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
		t.Fatalf("getting OaatGroup %s: %v", name, err)
	}
	return g.Spec.Suspend
}

func TestSuspendAndResume(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "backups", "item1")

	for _, step := range []struct {
		verb, want string
		suspend    bool
	}{
		{verb: "suspend", want: "oaatgroup.oaat.io/backups suspended\n", suspend: true},
		{verb: "suspend", want: "oaatgroup.oaat.io/backups suspended\n", suspend: true},
		{verb: "resume", want: "oaatgroup.oaat.io/backups resumed\n", suspend: false},
	} {
		stdout, stderr, err := kubectlOaat(t.Context(), ns, step.verb, "backups")
		t.Logf("%s: stdout %q", step.verb, stdout)
		if err != nil {
			t.Fatalf("%s: %v (stderr %q)", step.verb, err, stderr)
		}
		if stdout != step.want || stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q; want stdout %q and no stderr", step.verb, stdout, stderr, step.want)
		}
		if got := suspendOf(t, ns, "backups"); got != step.suspend {
			t.Errorf("after %s: spec.suspend = %t, want %t", step.verb, got, step.suspend)
		}
	}
}

func TestResumeWarnsAboutThePauseAnnotation(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	g := newGroup(t, ns, "backups", "item1")
	base := g.DeepCopy()
	g.Annotations = map[string]string{v1alpha1.AnnotationPauseNewJobs: "true"}
	g.Spec.Suspend = true
	if err := k8sClient.Patch(t.Context(), g, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "resume", "backups")
	t.Logf("stdout:\n%sstderr:\n%s", stdout, stderr)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if stdout != "oaatgroup.oaat.io/backups resumed\n" {
		t.Errorf("stdout = %q", stdout)
	}
	want := `Warning: the annotation pause_new_jobs="true" still suspends OaatGroup "backups"; remove it with: kubectl annotate oaatgroup backups -n ` + ns + " pause_new_jobs-\n"
	if stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	if suspendOf(t, ns, "backups") {
		t.Error("spec.suspend is still true")
	}
}

func TestSuspendMissingGroup(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for _, verb := range []string{"suspend", "resume"} {
		stdout, _, err := kubectlOaat(t.Context(), ns, verb, "nope")
		if want := `OaatGroup "nope" not found in namespace "` + ns + `"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", verb, err, want)
		}
		if stdout != "" {
			t.Errorf("%s: stdout = %q, want nothing", verb, stdout)
		}
	}
}
