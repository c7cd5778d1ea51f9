package locks

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// claim is the claim of an installation whose longest waiter began to wait at since (from t0),
// renewed at renewed (from t0).
func claim(installation string, waiting int32, since, renewed time.Duration) v1alpha1.InstallationWaiting {
	return v1alpha1.InstallationWaiting{Installation: installation, Waiting: waiting,
		Since: metav1.NewTime(t0.Add(since)), RenewedAt: metav1.NewTime(t0.Add(renewed))}
}

func TestInstallationOf(t *testing.T) {
	if got := InstallationOf(nil); got != "" {
		t.Errorf("InstallationOf(all namespaces) = %q, want empty", got)
	}
	if got := InstallationOf([]string{"team-b", "team-a", "team-c"}); got != "team-a" {
		t.Errorf("InstallationOf = %q, want the first namespace in alphabetical order", got)
	}
}

func TestClaimOf(t *testing.T) {
	deleting := group("d", []string{"nas"}, "", after(-time.Hour))
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	naming := []v1alpha1.OaatGroup{
		group("late", []string{"nas"}, "", after(time.Minute)),
		group("early", []string{"nas"}, "", after(-time.Minute)),
		group("running", []string{"nas"}, "running-x-1", nil),
		deleting,
	}
	got := ClaimOf("team-a", naming, t0)
	want := claim("team-a", 2, -time.Minute, 0)
	if got == nil || *got != want {
		t.Fatalf("ClaimOf = %+v, want %+v", got, want)
	}
	if got := ClaimOf("team-a", naming[2:], t0); got != nil {
		t.Fatalf("ClaimOf with nobody waiting = %+v, want nil", got)
	}
}

// TestClaimDue: a claim is written at once when it appears, goes, moves or is due for renewal;
// within the waiting count's rate limit when only its count changed; the other installations'
// claims are kept while they count and dropped once expired.
func TestClaimDue(t *testing.T) {
	now := t0.Add(time.Hour)
	other := claim("team-b", 1, 50*time.Minute, 59*time.Minute)
	expired := claim("team-c", 1, 0, 0)
	written := claim("team-a", 2, 55*time.Minute, 59*time.Minute+30*time.Second)
	lockWith := func(claims ...v1alpha1.InstallationWaiting) *v1alpha1.ClusterOaatLock {
		l := clusterLock("db", 1)
		l.Status.InstallationsWaiting = claims
		return l
	}
	renewed := func(c v1alpha1.InstallationWaiting) *v1alpha1.InstallationWaiting {
		c.RenewedAt = metav1.NewTime(now)
		return &c
	}
	moved := claim("team-a", 2, 56*time.Minute, 0)
	fewer := claim("team-a", 1, 55*time.Minute, 0)
	tests := []struct {
		name              string
		lock              *v1alpha1.ClusterOaatLock
		mine              *v1alpha1.InstallationWaiting
		wantClaims        []string
		wantDue, wantSoon bool
	}{
		{name: "appears", lock: lockWith(other, expired), mine: renewed(written), wantClaims: []string{"team-a", "team-b"}, wantDue: true},
		{name: "goes", lock: lockWith(other, written), mine: nil, wantClaims: []string{"team-b"}, wantDue: true},
		{name: "as written", lock: lockWith(other, written, expired), mine: renewed(written), wantClaims: []string{"team-a", "team-b"}},
		{name: "moves", lock: lockWith(written), mine: renewed(moved), wantClaims: []string{"team-a"}, wantDue: true},
		{name: "count only", lock: lockWith(written), mine: renewed(fewer), wantClaims: []string{"team-a"}, wantSoon: true},
		{name: "nothing to claim, nothing written", lock: lockWith(other), mine: nil, wantClaims: []string{"team-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims, due, soon := ClaimDue(tt.lock, "team-a", tt.mine, now)
			var names []string
			for _, c := range claims {
				names = append(names, c.Installation)
			}
			if !slices.Equal(names, tt.wantClaims) || due != tt.wantDue || soon != tt.wantSoon {
				t.Fatalf("claims %v, due %v, limited %v; want %v, %v, %v", names, due, soon, tt.wantClaims, tt.wantDue, tt.wantSoon)
			}
		})
	}
	// Renewal: the same claim written a minute ago or more is due again.
	old := claim("team-a", 2, 55*time.Minute, 59*time.Minute-time.Second)
	if _, due, _ := ClaimDue(lockWith(old), "team-a", renewed(old), now); !due {
		t.Fatal("a claim written over a minute ago is not due for renewal")
	}
}

// TestTakeCountsOtherInstallationsClaims: on a ClusterOaatLock, another installation's claim that
// counts and began before mine keeps the free slot for its group; one that came later, expired,
// or is the installation's own (its waiters it sees) does not.
func TestTakeCountsOtherInstallationsClaims(t *testing.T) {
	g := group("a", nil, "", nil)
	g.Namespace = "team-a"
	g.Spec.ClusterLocks = []string{"db"}
	mine := Claim{Since: t0, Namespace: "team-a", Group: "a"}
	h := holder("a", "a-x-2")
	tests := []struct {
		name      string
		claim     v1alpha1.InstallationWaiting
		wantTaken bool
	}{
		{name: "an earlier claim of another installation", claim: claim("team-b", 1, -time.Minute, 0)},
		{name: "a later claim of another installation", claim: claim("team-b", 1, time.Minute, 0), wantTaken: true},
		{name: "an expired claim", claim: claim("team-b", 1, -time.Hour, -ClaimExpiry), wantTaken: true},
		{name: "the installation's own claim", claim: claim("team-a", 1, -time.Minute, 0), wantTaken: true},
		// Both installations' groups began to wait in the same second (metav1.Time): the one of
		// the installation first by name takes the slot, whichever side decides.
		{name: "a claim of the same time, of an installation after mine by name", claim: claim("team-b", 1, 0, 0), wantTaken: true},
		{name: "a claim of the same time, of an installation before mine by name", claim: claim("team-0", 1, 0, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := clusterLock("db", 1)
			l.Status.InstallationsWaiting = []v1alpha1.InstallationWaiting{tt.claim}
			in := input(l)
			in.Installation = "team-a"
			acquire, blocked, _ := Take(&g, in, mine, h, t0)
			if taken := len(acquire) == 1 && blocked == nil; taken != tt.wantTaken {
				t.Fatalf("taken %v (blocked %v), want %v", taken, blocked, tt.wantTaken)
			}
		})
	}
}
