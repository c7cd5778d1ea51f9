package locks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// entry is the waiting of an installation whose longest waiter began to wait at since (from t0),
// written at renewed (from t0).
func entry(installation string, waiting int32, since, renewed time.Duration) v1alpha1.InstallationWaiting {
	return v1alpha1.InstallationWaiting{Installation: installation, Waiting: waiting,
		Since: metav1.NewTime(t0.Add(since)), RenewedAt: metav1.NewTime(t0.Add(renewed))}
}

// TestInstallationOf proves that an installation is named by the first of its namespaces in
// alphabetical order, and that one of all namespaces has no name.
func TestInstallationOf(t *testing.T) {
	tests := []struct {
		namespaces []string
		want       string
	}{
		{namespaces: nil, want: ""},
		{namespaces: []string{}, want: ""},
		{namespaces: []string{"team-b"}, want: "team-b"},
		{namespaces: []string{"team-b", "team-a", "team-c"}, want: "team-a"},
	}
	for _, tt := range tests {
		if got := InstallationOf(tt.namespaces); got != tt.want {
			t.Errorf("InstallationOf(%q) = %q, want %q", tt.namespaces, got, tt.want)
		}
	}
}

// TestCounts proves that an entry counts for WaitingExpiry after its last renewal, and no longer.
func TestCounts(t *testing.T) {
	tests := []struct {
		name    string
		renewed time.Duration
		want    bool
	}{
		{name: "renewed now", renewed: 0, want: true},
		{name: "renewed in the future (another clock)", renewed: time.Minute, want: true},
		{name: "renewed just within the expiry", renewed: -WaitingExpiry + time.Second, want: true},
		{name: "renewed the expiry ago", renewed: -WaitingExpiry},
		{name: "renewed long ago", renewed: -time.Hour},
	}
	for _, tt := range tests {
		if got := Counts(entry("team-b", 1, -time.Hour, tt.renewed), t0); got != tt.want {
			t.Errorf("%s: Counts = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestWaitingDue proves when an installation's entry of a ClusterOaatLock's waiting is written:
// at once when it appears, goes, moves or is due for renewal; within the rate limit when only its
// count changed; never when it is as written. The entries to write are the others' that still
// count (the expired ones removed) and the installation's own as of now, by installation.
func TestWaitingDue(t *testing.T) {
	now := t0.Add(time.Hour)
	other := entry("team-b", 1, 50*time.Minute, 59*time.Minute)
	expired := entry("team-c", 1, 0, 0)
	written := entry("team-a", 2, 55*time.Minute, 59*time.Minute+30*time.Second)
	stale := entry("team-a", 2, 55*time.Minute, 59*time.Minute-time.Second)
	lockWith := func(entries ...v1alpha1.InstallationWaiting) *v1alpha1.ClusterOaatLock {
		l := clusterLock("db", 1)
		l.Status.InstallationsWaiting = entries
		return l
	}
	renewed := func(e v1alpha1.InstallationWaiting) *v1alpha1.InstallationWaiting {
		e.RenewedAt = metav1.NewTime(now)
		return &e
	}
	moved := entry("team-a", 2, 56*time.Minute, 0)
	fewer := entry("team-a", 1, 55*time.Minute, 0)
	tests := []struct {
		name         string
		lock         *v1alpha1.ClusterOaatLock
		mine         *v1alpha1.InstallationWaiting
		wantEntries  []v1alpha1.InstallationWaiting
		due, limited bool
	}{
		{name: "appears; an expired entry is removed", lock: lockWith(other, expired), mine: renewed(written),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(written), other}, due: true},
		{name: "goes", lock: lockWith(other, written), mine: nil,
			wantEntries: []v1alpha1.InstallationWaiting{other}, due: true},
		{name: "goes, the last", lock: lockWith(written), mine: nil, due: true},
		{name: "as written", lock: lockWith(other, written, expired), mine: renewed(written),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(written), other}},
		{name: "moves: another group waits longest", lock: lockWith(written), mine: renewed(moved),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(moved)}, due: true},
		{name: "due for renewal", lock: lockWith(stale), mine: renewed(stale),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(stale)}, due: true},
		{name: "due for renewal, written exactly WaitingRenewal ago", lock: lockWith(entry("team-a", 2, 55*time.Minute, 59*time.Minute)),
			mine: renewed(written), wantEntries: []v1alpha1.InstallationWaiting{*renewed(written)}, due: true},
		{name: "only the count changed: limited", lock: lockWith(written), mine: renewed(fewer),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(fewer)}, limited: true},
		{name: "only the count changed, due for renewal: due", lock: lockWith(stale), mine: renewed(fewer),
			wantEntries: []v1alpha1.InstallationWaiting{*renewed(fewer)}, due: true},
		{name: "nothing waits, nothing written", lock: lockWith(other), mine: nil,
			wantEntries: []v1alpha1.InstallationWaiting{other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, due, limited := WaitingDue(tt.lock, "team-a", tt.mine, now)
			if d := diff(tt.wantEntries, entries); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			if due != tt.due || limited != tt.limited {
				t.Errorf("due %v, limited %v; want %v, %v", due, limited, tt.due, tt.limited)
			}
		})
	}
}
