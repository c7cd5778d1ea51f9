package main

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// newRun creates the OaatRun name of item of group in ns and gives it phase, as the operator would.
func newRun(t *testing.T, ns, name, group, item string, phase v1alpha1.OaatRunPhase) {
	t.Helper()
	run := &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item},
	}
	if err := k8sClient.Create(t.Context(), run); err != nil {
		t.Fatalf("creating OaatRun %s: %v", name, err)
	}
	setRunStatus(t, run, v1alpha1.OaatRunStatus{Phase: phase})
}

func TestStatusShowsOnDemandRuns(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newGroup(t, ns, "backups", "item1", "item3", "/srv/photos")
	newGroup(t, ns, "quiet", "a")
	// Created in this order, and named so that the same second also sorts them so.
	newRun(t, ns, "backups-a1", "backups", "/srv/photos", v1alpha1.OaatRunPending)
	newRun(t, ns, "backups-b2", "backups", "item1", v1alpha1.OaatRunInProgress)
	newRun(t, ns, "backups-c3", "backups", "item3", v1alpha1.OaatRunPending)
	newRun(t, ns, "backups-d4", "backups", "item3", v1alpha1.OaatRunSucceeded)
	newRun(t, ns, "quiet-e5", "quiet", "a", v1alpha1.OaatRunRejected)

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "status")
	t.Logf("stdout:\n%s", stdout)
	if err != nil {
		t.Fatalf("status: %v (stderr %q)", err, stderr)
	}
	groups := strings.Split(stdout, "\n\n")
	if len(groups) != 3 || !strings.HasPrefix(groups[0], ns+"/backups ") || !strings.HasPrefix(groups[1], ns+"/quiet ") {
		t.Fatalf("want the tables of backups and quiet, got:\n%s", stdout)
	}
	if want := "\n  on demand: 2 pending (/srv/photos, item3), in progress: item1 (backups-b2)"; !strings.HasSuffix(groups[0], want) {
		t.Errorf("the table of backups does not end with %q:\n%s", want, groups[0])
	}
	if strings.Contains(groups[1], "on demand") {
		t.Errorf("the table of quiet, which has only a finished run, has an on-demand line:\n%s", groups[1])
	}

	stdout, _, err = kubectlOaat(t.Context(), ns, "status", "quiet")
	if err != nil || strings.Contains(stdout, "backups") {
		t.Errorf("status quiet: error %v, stdout:\n%s", err, stdout)
	}
}
