package main

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		method, target string
		want           requestKind
	}{
		{"POST", "/api/v1/namespaces/chaos/pods", podCreate},
		{"POST", "/api/v1/namespaces/chaos/pods/", podCreate},
		{"POST", "/api/v1/namespaces/chaos/pods/p/eviction", passThrough},
		{"POST", "/api/v1/namespaces/chaos/pods/p/binding", passThrough},
		{"POST", "/api/v1/namespaces/chaos/events", passThrough},
		{"POST", "/apis/events.k8s.io/v1/namespaces/chaos/events", passThrough},
		{"GET", "/api/v1/namespaces/chaos/pods?watch=true&resourceVersion=5", podWatch},
		{"GET", "/api/v1/pods?allowWatchBookmarks=true&watch=true", podWatch},
		{"GET", "/api/v1/namespaces/chaos/pods?limit=500", passThrough},
		{"GET", "/api/v1/namespaces/chaos/pods/p", passThrough},
		{"DELETE", "/api/v1/namespaces/chaos/pods/p", passThrough},
		{"GET", "/api/v1/namespaces/chaos/configmaps?watch=true", passThrough},
		{"PUT", "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g-1/status", groupStatusWrite},
		{"PATCH", "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g-1/status", groupStatusWrite},
		{"PUT", "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g-1", passThrough},
		{"PUT", "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatruns/r/status", passThrough},
		{"GET", "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g-1/status", passThrough},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/oaat-operator-system/leases/oaat-operator.oaat.io", leaseWrite},
		{"POST", "/apis/coordination.k8s.io/v1/namespaces/oaat-operator-system/leases", leaseWrite},
		{"GET", "/apis/coordination.k8s.io/v1/namespaces/oaat-operator-system/leases/oaat-operator.oaat.io", passThrough},
	}
	for _, tc := range cases {
		if got := classify(httptest.NewRequest(tc.method, tc.target, http.NoBody)); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.target, got, tc.want)
		}
	}
}

func TestFaultPicker(t *testing.T) {
	never := &faultPicker{rate: 0, rng: rand.New(rand.NewPCG(1, 1))}
	for range 1000 {
		if f := never.pick(); f != noFault {
			t.Fatalf("rate 0 picked %s", f)
		}
	}
	p := &faultPicker{rate: 0.3, rng: rand.New(rand.NewPCG(7, 1))}
	counts := make(map[createFault]int) // a count per fault, not a table of them
	const n = 30000
	for range n {
		counts[p.pick()]++
	}
	if faulted := n - counts[noFault]; faulted < n*27/100 || faulted > n*33/100 {
		t.Errorf("faulted %d of %d at rate 0.3", faulted, n)
	}
	for _, f := range []createFault{faultTimeout, faultReset, faultSlow} {
		if counts[f] < n*8/100 || counts[f] > n*12/100 {
			t.Errorf("%s: %d of %d, want about a third of the faults", f, counts[f], n)
		}
	}
	p.stop()
	for range 1000 {
		if f := p.pick(); f != noFault {
			t.Fatalf("a stopped picker picked %s", f)
		}
	}
	for range 100 {
		if d := p.lateBy(); d < time.Second || d >= 4*time.Second {
			t.Fatalf("lateBy %s outside [1s, 4s)", d)
		}
	}
}

func groupJSON(t *testing.T, run *v1alpha1.CurrentRun) []byte {
	t.Helper()
	g := v1alpha1.OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: "g-3", Namespace: "chaos"}}
	g.Status.CurrentRun = run
	body, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func TestFreshIntent(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 10, 400e6, time.UTC)
	run := func(startedAt time.Time) *v1alpha1.CurrentRun {
		return &v1alpha1.CurrentRun{Item: "a", PodName: "g-3-a-7", StartedAt: metav1.NewTime(startedAt)}
	}
	cases := []struct {
		name string
		body []byte
		want bool
	}{
		{"decided this second", groupJSON(t, run(now.Truncate(time.Second))), true},
		{"decided 2 s ago", groupJSON(t, run(now.Add(-2*time.Second))), true},
		{"running for 10 s", groupJSON(t, run(now.Add(-10*time.Second))), false},
		{"no current run", groupJSON(t, nil), false},
		{"not JSON", []byte{0x6b, 0x38, 0x73, 0}, false},
	}
	for _, tc := range cases {
		group, pod, ok := freshIntent(tc.body, now)
		if ok != tc.want {
			t.Errorf("%s: ok = %v, want %v", tc.name, ok, tc.want)
		}
		if ok && (group != "g-3" || pod != "g-3-a-7") {
			t.Errorf("%s: %s/%s, want g-3/g-3-a-7", tc.name, group, pod)
		}
	}
}

// A method the table above does not list is no pod creation.
func TestClassifyMethods(t *testing.T) {
	for _, m := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if classify(httptest.NewRequest(m, "/api/v1/namespaces/chaos/pods", http.NoBody)) != passThrough {
			t.Errorf("%s on the pod collection is not passed through", m)
		}
	}
}
