package groupspec

import (
	"strings"
	"testing"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// spec.learnedRunTimeout read with its defaults, and the bound of an item's runs with it or with
// spec.runTimeout, as the planner and the queue priority both read it.
func TestLearnedRunTimeout(t *testing.T) {
	g := &v1alpha1.OaatGroup{}
	g.Spec.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{Max: "3h"}
	g.Status.Items = []v1alpha1.ItemStatus{{Name: "a", RecentRunSeconds: []int64{600, 900}}, {Name: "b"}}
	p, err := Read(g)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Learned{Factor: v1alpha1.DefaultLearnedFactor, Min: time.Minute, Max: 3 * time.Hour}); p.Learned == nil || *p.Learned != want {
		t.Fatalf("Learned %+v, want %+v", p.Learned, want)
	}
	for item, want := range map[string]time.Duration{"a": 45 * time.Minute, "b": 3 * time.Hour, "unknown": 3 * time.Hour} {
		got, err := ItemRunTimeout(g, item)
		if err != nil || got != want {
			t.Errorf("ItemRunTimeout(%s) = %v, %v; want %v", item, got, err, want)
		}
	}
	if got := p.RunTimeoutOf([]int64{600, 900}); got != 45*time.Minute {
		t.Errorf("RunTimeoutOf = %v, want 45m", got)
	}

	g.Spec.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{Factor: 5, Min: "10m", Max: "1d"}
	if p, _ = Read(g); *p.Learned != (Learned{Factor: 5, Min: 10 * time.Minute, Max: 24 * time.Hour}) {
		t.Errorf("Learned %+v", p.Learned)
	}

	fixed := &v1alpha1.OaatGroup{}
	fixed.Spec.RunTimeout = "5m"
	fixed.Status.Items = g.Status.Items
	if got, err := ItemRunTimeout(fixed, "a"); err != nil || got != 5*time.Minute {
		t.Errorf("with spec.runTimeout: %v, %v; want 5m", got, err)
	}
	if p, _ := Read(fixed); p.Learned != nil || p.RunTimeoutOf([]int64{600}) != 5*time.Minute {
		t.Errorf("with spec.runTimeout: %+v", p)
	}

	for _, bad := range []v1alpha1.LearnedRunTimeout{{}, {Max: "soon"}, {Min: "x", Max: "1h"}} {
		g.Spec.LearnedRunTimeout = &bad
		if _, err := Read(g); err == nil || !strings.Contains(err.Error(), "spec.learnedRunTimeout.") {
			t.Errorf("%+v: error %v, want one naming spec.learnedRunTimeout's field", bad, err)
		}
		if _, err := ItemRunTimeout(g, "a"); err == nil {
			t.Errorf("%+v: ItemRunTimeout gave no error", bad)
		}
	}
}
