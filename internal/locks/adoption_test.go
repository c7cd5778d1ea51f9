package locks

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestTakeWaitsForAdoption: a ClusterOaatLock created less than the adoption window ago gives no slot
// to an installation of some namespaces, and says when it will; an OaatLock, an installation of
// all namespaces and an older ClusterOaatLock give it at once.
func TestTakeWaitsForAdoption(t *testing.T) {
	g := group("a", []string{"nas"}, "", nil)
	g.Namespace = "team-a"
	g.Spec.ClusterLocks = []string{"db"}
	mine := Claim{Since: t0, Namespace: "team-a", Group: "a"}
	created := func(l v1alpha1.Lock, ago time.Duration) v1alpha1.Lock {
		l.SetCreationTimestamp(metav1.NewTime(t0.Add(-ago)))
		return l
	}
	tests := []struct {
		name         string
		installation string
		locks        []v1alpha1.Lock
		wantBlocked  []string
		wantRetryAt  time.Time
	}{
		{name: "a new ClusterOaatLock, an installation of some namespaces",
			installation: "team-a", locks: []v1alpha1.Lock{created(clusterLock("db", 1), 10*time.Second), lock("nas", 1)},
			wantBlocked: []string{"ClusterOaatLock/db"}, wantRetryAt: t0.Add(DefaultAdoptionWindow - 10*time.Second)},
		{name: "a new ClusterOaatLock, an installation of all namespaces",
			locks: []v1alpha1.Lock{created(clusterLock("db", 1), 10*time.Second), lock("nas", 1)}},
		{name: "a ClusterOaatLock as old as the window",
			installation: "team-a", locks: []v1alpha1.Lock{created(clusterLock("db", 1), DefaultAdoptionWindow), lock("nas", 1)}},
		{name: "a new OaatLock and an older ClusterOaatLock",
			installation: "team-a", locks: []v1alpha1.Lock{created(clusterLock("db", 1), time.Hour), created(lock("nas", 1), time.Second)}},
		{name: "a new ClusterOaatLock and a full OaatLock: both blocked, retried when the first gives slots",
			installation: "team-a", locks: []v1alpha1.Lock{created(clusterLock("db", 1), 0), lock("nas", 1, holder("b", "b-x-1"))},
			wantBlocked: []string{"ClusterOaatLock/db", "nas"}, wantRetryAt: t0.Add(DefaultAdoptionWindow)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := input(tt.locks...)
			in.Installation, in.AdoptionWindow = tt.installation, DefaultAdoptionWindow
			acquire, blocked, retryAt := Take(&g, in, mine, holder("a", "a-x-1"), t0)
			if !slices.Equal(blocked, tt.wantBlocked) || !retryAt.Equal(tt.wantRetryAt) {
				t.Fatalf("blocked %v, retry at %v; want %v, %v", blocked, retryAt, tt.wantBlocked, tt.wantRetryAt)
			}
			if wantTaken := len(tt.wantBlocked) == 0; (len(acquire) == 2) != wantTaken || !wantTaken && acquire != nil {
				t.Fatalf("acquire %v with blocked %v", holdersOf(acquire), blocked)
			}
		})
	}
}
