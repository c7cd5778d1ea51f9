package locks

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestClaimOrder(t *testing.T) {
	a := Claim{Since: t0, Namespace: "ns", Group: "a"}
	b := Claim{Since: t0, Namespace: "ns", Group: "b"}
	later := Claim{Since: t0.Add(time.Second), Namespace: "ns", Group: "a"}
	otherNamespace := Claim{Since: t0, Namespace: "a", Group: "z"}
	if !a.Before(b) || b.Before(a) || !b.Before(later) || later.Before(a) || a.Before(a) || !otherNamespace.Before(a) {
		t.Fatal("claims are not ordered by time, then namespace and name")
	}
}

func TestWaits(t *testing.T) {
	waiting := group("w", []string{"nas"}, "", after(0))
	deleting := group("d", []string{"nas"}, "", after(0))
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	idle := group("i", []string{"nas"}, "", nil)
	if !Waits(&waiting) || Waits(&deleting) || Waits(&idle) {
		t.Fatalf("Waits: waiting %v, being deleted %v, not waiting %v; want true, false, false",
			Waits(&waiting), Waits(&deleting), Waits(&idle))
	}
	if n := WaitingCount([]v1alpha1.OaatGroup{waiting, deleting, idle}); n != 1 {
		t.Fatalf("WaitingCount = %d, want 1 (the group being deleted does not wait)", n)
	}
}

// TestToWake: a change of a lock wakes its holders, the groups whose current run it does not
// list, and as many waiters as it has slots left, earliest claims first; nobody else.
func TestToWake(t *testing.T) {
	nas := []string{"nas"}
	naming := []v1alpha1.OaatGroup{
		group("holder", nas, "holder-x-1", nil),
		group("unlisted", nas, "unlisted-x-3", nil), // its run goes on; the lock was created again
		group("w-late", nas, "", after(time.Minute)),
		group("w-early", nas, "", after(-time.Minute)),
		group("w-mid", nas, "", after(0)),
		group("idle", nas, "", nil),
	}
	tests := []struct {
		capacity int32
		want     []string
	}{
		{capacity: 1, want: []string{"holder", "unlisted"}},
		{capacity: 2, want: []string{"holder", "unlisted"}},
		{capacity: 3, want: []string{"holder", "unlisted", "w-early"}},
		{capacity: 4, want: []string{"holder", "unlisted", "w-early", "w-mid"}},
		{capacity: 9, want: []string{"holder", "unlisted", "w-early", "w-mid", "w-late"}},
	}
	for _, tt := range tests {
		l := lock("nas", tt.capacity, holder("holder", "holder-x-1"))
		var got []string
		for _, key := range ToWake(l, naming) {
			if key.Namespace != "ns" {
				t.Fatalf("woke %v, of another namespace", key)
			}
			got = append(got, key.Name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("capacity %d: woke %v, want %v", tt.capacity, got, tt.want)
		}
	}
}

// TestToWakeIgnoresTheRunOfADeletingGroup: a group being deleted records no run, so the lock does
// not take its current run, which it does not list, for a slot taken: the waiter is woken (its
// pass decides with the pods in view) and the deleting group is not.
func TestToWakeIgnoresTheRunOfADeletingGroup(t *testing.T) {
	nas := []string{"nas"}
	deleting := group("deleting", nas, "deleting-x-1", nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	var got []string
	for _, key := range ToWake(lock("nas", 1), []v1alpha1.OaatGroup{deleting, group("w", nas, "", after(0))}) {
		got = append(got, key.Name)
	}
	if !slices.Equal(got, []string{"w"}) {
		t.Errorf("woke %v, want [w]", got)
	}
}

// TestToWakeClusterLock: the holders of a ClusterOaatLock are woken in their own namespaces.
func TestToWakeClusterLock(t *testing.T) {
	h := holder("backups", "backups-x-1")
	h.Namespace = "team-a"
	got := ToWake(clusterLock("db", 1, h), nil)
	if want := []types.NamespacedName{{Namespace: "team-a", Name: "backups"}}; !slices.Equal(got, want) {
		t.Fatalf("woke %v, want %v", got, want)
	}
}
