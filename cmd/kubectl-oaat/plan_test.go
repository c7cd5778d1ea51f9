package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// newSleeperType creates the OaatType sleeper in ns.
func newSleeperType(t *testing.T, ns string) {
	t.Helper()
	if err := k8sClient.Create(t.Context(), builders.Type().Namespace(ns).Obj()); err != nil {
		t.Fatalf("creating OaatType sleeper: %v", err)
	}
}

// planRow matches a row of the plan's table: its start and item (its end may be "-").
var planRow = regexp.MustCompile(`(?m)^ {2}(\S+) \(\S+\)\s+(?:\S+ \(\S+\)|-)\s+(\S+)`)

func TestPlan(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	newSleeperType(t, ns)
	newGroup(t, ns, "backups", "a", "b", "c")
	// As the operator would write it: c succeeded longest ago, then a, then b; their runs took 10,
	// 5 and 20 minutes. The group's frequency is the default, 1h.
	g := &v1alpha1.OaatGroup{}
	if err := k8sClient.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "backups"}, g); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ago := func(d time.Duration) *metav1.Time {
		t := metav1.NewTime(now.Add(-d).Truncate(time.Second))
		return &t
	}
	g.Status.ObservedGeneration = g.Generation
	g.Status.Items = []v1alpha1.ItemStatus{
		{Name: "a", LastSuccess: ago(2 * time.Hour), RecentRunSeconds: []int64{600}},
		{Name: "b", LastSuccess: ago(90 * time.Minute), RecentRunSeconds: []int64{300}},
		{Name: "c", LastSuccess: ago(150 * time.Minute), RecentRunSeconds: []int64{1200}},
	}
	if err := k8sClient.Status().Update(t.Context(), g); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "plan", "backups", "--for", "90m")
	t.Logf("stdout:\n%s", stdout)
	if err != nil {
		t.Fatalf("plan: %v (stderr %q)", err, stderr)
	}
	if !strings.HasPrefix(stdout, ns+"/backups  forecast for 90m from ") {
		t.Errorf("the heading does not name the group and the horizon:\n%s", stdout)
	}
	var order []string
	var starts []time.Time
	for _, m := range planRow.FindAllStringSubmatch(stdout, -1) {
		start, err := time.Parse(time.RFC3339, m[1])
		if err != nil {
			continue // the table's heading
		}
		order = append(order, m[2])
		starts = append(starts, start)
	}
	// c, a, b back to back (20 + 10 + 5 minutes), then c again an hour after its success.
	if want := []string{"c", "a", "b", "c"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("predicted order %v, want %v", order, want)
	}
	for i, offset := range []time.Duration{0, 20 * time.Minute, 30 * time.Minute, 80 * time.Minute} {
		if got := starts[i].Sub(starts[0]); got != offset {
			t.Errorf("run %d (%s) starts %s after the first, want %s", i, order[i], got, offset)
		}
	}
	for _, want := range []string{
		"run times: a 10m0s (longest recent run), b 5m0s (longest recent run), c 20m0s (longest recent run)",
		"forecast ends: the horizon ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan does not say %q", want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "missing"}, `OaatGroup "missing" not found in namespace "` + ns + `"`},
		{[]string{"plan", "missing", "--for", "0s"}, "--for 0s: give a positive duration of at most 744h0m0s"},
		{[]string{"plan"}, "accepts 1 arg(s), received 0"},
	} {
		_, _, err := kubectlOaat(t.Context(), ns, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}
