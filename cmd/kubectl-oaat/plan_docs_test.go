package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// forecastPage is the page that shows the output of `kubectl oaat plan`.
const forecastPage = "../../docs/forecast.md"

// planOutputMarker precedes the page's block of plan's output, which TestPlanOutputOfTheDocs
// writes with UPDATE_DOCS=1 and otherwise compares with what plan prints.
const planOutputMarker = "<!-- output: cmd/kubectl-oaat TestPlanOutputOfTheDocs -->"

// The output of `kubectl oaat plan nightly -n team-a` that docs/forecast.md shows is what the
// plugin prints, at the flag's default horizon, for the group of the page's YAML block in the
// state the page describes: mode EachOnce, its round started an hour ago, item a succeeded 80
// minutes ago in 10 minutes, b ran in 20 and 15 minutes, c never ran, and Ready; now is
// 2026-11-21T12:00:00Z.
func TestPlanOutputOfTheDocs(t *testing.T) {
	data, err := os.ReadFile(filepath.Clean(forecastPage))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	group := &v1alpha1.OaatGroup{}
	if err := yaml.UnmarshalStrict([]byte(fencedBlockAfter(t, page, "## `kubectl oaat plan`", "```yaml\n")), group); err != nil {
		t.Fatalf("the page's OaatGroup: %v", err)
	}
	if group.Name != "nightly" || group.Namespace != "team-a" {
		t.Fatalf("the page's group is %s/%s, not team-a/nightly, the group of its command", group.Namespace, group.Name)
	}
	now, at := builders.T0, builders.At
	group.Generation = 1
	group.CreationTimestamp = *at(-90 * time.Minute)
	group.Status = v1alpha1.OaatGroupStatus{
		ObservedGeneration: 1,
		RoundStartedAt:     at(-time.Hour),
		Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Valid",
			ObservedGeneration: 1, LastTransitionTime: *at(-90 * time.Minute)}},
		Items: []v1alpha1.ItemStatus{
			{Name: "a", LastSuccess: at(-80 * time.Minute), RecentRunSeconds: []int64{600}},
			{Name: "b", RecentRunSeconds: []int64{1200, 900}},
			{Name: "c"},
		},
	}
	typ := builders.Type().Obj()
	typ.Name, typ.Namespace = group.Spec.OaatType, group.Namespace

	flag := newPlanCommand(nil, genericiooptions.IOStreams{}).Flags().Lookup("for")
	horizon, err := time.ParseDuration(flag.DefValue)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := writePlan(&out, planner.Input{Group: group, Type: typ}, now, horizon); err != nil {
		t.Fatal(err)
	}
	shown := fencedBlockAfter(t, page, planOutputMarker, "```text\n")
	if os.Getenv("UPDATE_DOCS") == "1" {
		if err := os.WriteFile(forecastPage, []byte(strings.Replace(page, planOutputMarker+"\n```text\n"+shown,
			planOutputMarker+"\n```text\n"+out.String(), 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(out.String(), shown); diff != "" {
		t.Errorf("%s: the output of kubectl oaat plan differs from what the plugin prints (-printed +page); "+
			"UPDATE_DOCS=1 go test ./cmd/kubectl-oaat -run %s writes it:\n%s", forecastPage, t.Name(), diff)
	}
}

// fencedBlockAfter returns the text of the first fenced block that opens with fence after the
// first line of the page that starts with after.
func fencedBlockAfter(t *testing.T, page, after, fence string) string {
	t.Helper()
	start := strings.Index(page, "\n"+after)
	if start < 0 {
		t.Fatalf("%s has no line %q", forecastPage, after)
	}
	open := strings.Index(page[start:], "\n"+fence)
	if open < 0 {
		t.Fatalf("%s: no %q block after %q", forecastPage, strings.TrimSpace(fence), after)
	}
	body := page[start+open+1+len(fence):]
	end := strings.Index(body, "```\n")
	if end < 0 {
		t.Fatalf("%s: the block after %q is not closed", forecastPage, after)
	}
	return body[:end]
}
