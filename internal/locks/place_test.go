package locks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestPlaceOrder proves the one global order of the queues: the earlier since first, then the
// smaller namespace/name; a place is not before itself, and compare agrees with Before.
func TestPlaceOrder(t *testing.T) {
	a := Place{Since: t0, Namespace: "ns", Group: "a"}
	tests := []struct {
		name   string
		p, o   Place
		before bool
	}{
		{name: "earlier since, later name", p: Place{Since: t0.Add(-time.Second), Namespace: "ns", Group: "z"}, o: a, before: true},
		{name: "later since, earlier name", p: Place{Since: t0.Add(time.Second), Namespace: "a", Group: "a"}, o: a},
		{name: "same since, smaller name", p: a, o: Place{Since: t0, Namespace: "ns", Group: "b"}, before: true},
		{name: "same since, smaller namespace first", p: Place{Since: t0, Namespace: "a", Group: "z"}, o: a, before: true},
		{name: "same since, larger namespace", p: Place{Since: t0, Namespace: "nt", Group: "a"}, o: a},
		{name: "same since: compared as the string namespace/name, team-a/a before team/z",
			p: Place{Since: t0, Namespace: "team-a", Group: "a"}, o: Place{Since: t0, Namespace: "team", Group: "z"}, before: true},
		{name: "the same instant in another location", p: Place{Since: t0.In(time.FixedZone("x", 3600)), Namespace: "ns", Group: "b"}, o: a},
		{name: "itself", p: a, o: a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Before(tt.o); got != tt.before {
				t.Fatalf("Before = %v, want %v", got, tt.before)
			}
			want := 0
			switch {
			case tt.before:
				want = -1
			case tt.o.Before(tt.p):
				want = 1
			}
			if got := tt.p.Compare(tt.o); got != want {
				t.Fatalf("Compare = %d, want %d", got, want)
			}
		})
	}
}

// TestWaits proves that a group's request counts only while it has one and is not being deleted.
func TestWaits(t *testing.T) {
	deleting := group("d", []string{"nas"}, "", after(0))
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	tests := []struct {
		name  string
		group v1alpha1.OaatGroup
		want  bool
	}{
		{name: "waiting", group: group("w", []string{"nas"}, "", after(0)), want: true},
		{name: "waiting and running", group: group("r", []string{"nas"}, "r-1", after(0)), want: true},
		{name: "being deleted", group: deleting},
		{name: "not waiting", group: group("i", []string{"nas"}, "", nil)},
	}
	for _, tt := range tests {
		if got := Waits(&tt.group); got != tt.want {
			t.Errorf("%s: Waits = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestRequests proves when a lock wait asks a lock for a pod: it names that pod (a request of
// 0.2.0, without one, asks for none) and does not yield that lock.
func TestRequests(t *testing.T) {
	tests := []struct {
		name string
		wait *v1alpha1.LockWait
		pod  string
		want bool
	}{
		{name: "no request", wait: nil, pod: "a-1"},
		{name: "the pod", wait: wait(0, "a-1"), pod: "a-1", want: true},
		{name: "another pod", wait: wait(0, "a-2"), pod: "a-1"},
		{name: "a request of 0.2.0 (no pod)", wait: wait(0, ""), pod: ""},
		{name: "yielding the lock", wait: wait(0, "a-1", "nas"), pod: "a-1"},
		{name: "yielding another lock", wait: wait(0, "a-1", "db"), pod: "a-1", want: true},
	}
	for _, tt := range tests {
		if got := Requests(tt.wait, "nas", tt.pod); got != tt.want {
			t.Errorf("%s: Requests = %v, want %v", tt.name, got, tt.want)
		}
	}
}
