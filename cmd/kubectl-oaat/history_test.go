package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// withHistory writes a status of the group as the operator would after some runs: item a
// succeeded, item b failed twice, item c never ran.
func withHistory(t *testing.T, g *v1alpha1.OaatGroup, at time.Time) {
	t.Helper()
	base := g.DeepCopy()
	success, failure := metav1.NewTime(at.Add(-time.Hour)), metav1.NewTime(at.Add(-time.Minute))
	g.Status.RunCount = 7
	g.Status.Items = []v1alpha1.ItemStatus{
		{Name: "a", LastSuccess: &success, LastStarted: &success, LastReason: "Completed", LastExitCode: ptr.To[int32](0)},
		{Name: "b", LastFailure: &failure, LastStarted: &failure, FailureCount: 2, LastReason: "Error", LastExitCode: ptr.To[int32](1)},
		{Name: "c"},
	}
	if err := k8sClient.Status().Patch(t.Context(), g, client.MergeFrom(base)); err != nil {
		t.Fatalf("writing the status of OaatGroup %s: %v", g.Name, err)
	}
}

// exportTo runs `history export` and writes its output to a file of the test.
func exportTo(t *testing.T, ns, group string) (string, *v1alpha1.OaatGroupHistory) {
	t.Helper()
	stdout, stderr, err := kubectlOaat(t.Context(), ns, "history", "export", group)
	if err != nil {
		t.Fatalf("history export: %v (stderr %q)", err, stderr)
	}
	record := &v1alpha1.OaatGroupHistory{}
	if err := yaml.UnmarshalStrict([]byte(stdout), record); err != nil {
		t.Fatalf("history export wrote no OaatGroupHistory: %v\n%s", err, stdout)
	}
	file := filepath.Join(t.TempDir(), group+".yaml")
	if err := os.WriteFile(file, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	return file, record
}

func getRecord(t *testing.T, ns, name string) *v1alpha1.OaatGroupHistory {
	t.Helper()
	record := &v1alpha1.OaatGroupHistory{}
	if err := k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, record); err != nil {
		t.Fatalf("reading OaatGroupHistory %s: %v", name, err)
	}
	return record
}

// An export holds the items that ran and the run count; imported into a group created again
// without its status, the record is created for the operator to adopt, valid from the import on.
func TestHistoryExportThenImportIntoARecreatedGroup(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	g := newGroup(t, ns, "backups", "a", "b", "c")
	now := time.Now().Truncate(time.Second) // as the API server stores it
	withHistory(t, g, now)
	success, failure := metav1.NewTime(now.Add(-time.Hour)), metav1.NewTime(now.Add(-time.Minute))
	want := v1alpha1.OaatGroupHistorySpec{GroupUID: string(g.UID), OaatType: "sleeper", RunCount: 7, Items: []v1alpha1.ItemHistory{
		{Name: "a", LastSuccess: &success, LastStarted: &success, LastReason: "Completed", LastExitCode: ptr.To[int32](0)},
		{Name: "b", LastFailure: &failure, LastStarted: &failure, FailureCount: 2, LastReason: "Error", LastExitCode: ptr.To[int32](1)},
	}}
	// When the record was written and until when it holds are the writer's (export, then import).
	opts := []cmp.Option{cmpopts.IgnoreFields(v1alpha1.OaatGroupHistorySpec{}, "DeletedAt", "ExpiresAt"),
		builders.EquateTimes}

	file, exported := exportTo(t, ns, "backups")
	if diff := cmp.Diff(want, exported.Spec, opts...); diff != "" {
		t.Fatalf("export (-want +got):\n%s", diff)
	}

	if err := k8sClient.Delete(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	newGroup(t, ns, "backups", "a", "b", "c")
	stdout, stderr, err := kubectlOaat(t.Context(), ns, "history", "import", "backups", "-f", file)
	if err != nil {
		t.Fatalf("history import: %v (stderr %q)", err, stderr)
	}
	if want := "oaatgrouphistory.oaat.io/backups created (2 items)\n"; stdout != want {
		t.Errorf("history import: stdout %q, want %q", stdout, want)
	}
	record := getRecord(t, ns, "backups")
	if diff := cmp.Diff(want, record.Spec, opts...); diff != "" {
		t.Errorf("imported record (-want +got):\n%s", diff)
	}
	if time.Until(record.Spec.ExpiresAt.Time) < 6*24*time.Hour {
		t.Errorf("the imported record expires at %s; want in 7 days", record.Spec.ExpiresAt)
	}

	_, _, err = kubectlOaat(t.Context(), ns, "history", "import", "backups", "-f", file)
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second import: %v; want an error saying the record exists already", err)
	}
}

// A group that has had its first pass (the finalizer oaat.io/history) loses that finalizer alone,
// so that the operator's next pass adopts the imported record by its own rule.
func TestHistoryImportIntoAGroupPastItsFirstPass(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	old := newGroup(t, ns, "photos", "a", "b")
	withHistory(t, old, time.Now())
	file, _ := exportTo(t, ns, "photos")
	if err := k8sClient.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	g := builders.Group("a", "b").Named("photos").Namespace(ns).Frequency("").Obj()
	g.Finalizers = []string{"example.com/other", v1alpha1.FinalizerHistory}
	if err := k8sClient.Create(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // no operator runs to remove them
		_ = k8sClient.Patch(t.Context(), g, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "history", "import", "photos", "-f", file)
	if err != nil {
		t.Fatalf("history import: %v (stderr %q)", err, stderr)
	}
	if !strings.HasSuffix(stdout, "oaatgroup.oaat.io/photos adopts it on the operator's next pass\n") {
		t.Errorf("history import: stdout %q; want it to say the group adopts the record", stdout)
	}
	if err := k8sClient.Get(t.Context(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(g, v1alpha1.FinalizerHistory) || !controllerutil.ContainsFinalizer(g, "example.com/other") {
		t.Errorf("finalizers %v; want oaat.io/history removed and the other kept", g.Finalizers)
	}
}

// What cannot be imported is refused with a reason, before anything is written.
func TestHistoryImportRefusals(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	g := newGroup(t, ns, "docs", "a")
	withHistory(t, g, time.Now())
	ownFile, _ := exportTo(t, ns, "docs")

	other := filepath.Join(t.TempDir(), "other-type.yaml")
	data, err := os.ReadFile(ownFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(strings.NewReplacer("oaatType: sleeper", "oaatType: mailer", string(g.UID), "uid-of-an-earlier-group").Replace(string(data))), 0o600); err != nil {
		t.Fatal(err)
	}
	notARecord := filepath.Join(t.TempDir(), "group.yaml")
	if err := os.WriteFile(notARecord, []byte("apiVersion: oaat.io/v1alpha1\nkind: OaatGroup\nmetadata:\n  name: docs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{ownFile, "is the history of OaatGroup \"docs\" itself"},
		{other, "the history of OaatType \"mailer\""},
		{notARecord, "not an OaatGroupHistory"},
		{filepath.Join(t.TempDir(), "missing.yaml"), "reading the record"},
	} {
		_, _, err := kubectlOaat(t.Context(), ns, "history", "import", "docs", "-f", tc.file)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("import of %s: %v; want an error containing %q", filepath.Base(tc.file), err, tc.want)
		}
	}
	records := &v1alpha1.OaatGroupHistoryList{}
	if err := k8sClient.List(t.Context(), records, client.InNamespace(ns)); err != nil || len(records.Items) != 0 {
		t.Errorf("records after the refusals: %d (%v); want none", len(records.Items), err)
	}
}

// The help of import names the value of -f as FILE, as docs/kubectl-plugin.md writes it, and
// not a back-quoted phrase of the usage, which pflag would take for the value's name.
func TestHistoryImportHelpNamesTheFile(t *testing.T) {
	stdout, stderr, err := kubectlOaat(t.Context(), "default", "history", "import", "--help")
	if err != nil {
		t.Fatalf("history import --help: %v (stderr %q)", err, stderr)
	}
	var flagLine string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, "--filename") {
			flagLine = strings.Join(strings.Fields(line), " ")
		}
	}
	want := "-f, --filename FILE the FILE that kubectl oaat history export wrote; - reads stdin"
	if flagLine != want {
		t.Errorf("the help's line of --filename:\n got %q\nwant %q\nhelp:\n%s", flagLine, want, stdout)
	}
}
