package locks

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Installations of the operator that watch only some namespaces cannot read each other's groups.
// When they share a ClusterOaatLock, each writes into the lock's status.installationClaims how
// many of its groups wait for it and since when the longest has waited, and counts the claims of
// the others like waiters it cannot see: a freed slot goes to the group that has waited longest,
// whichever installation runs it, instead of staying with a group that hands it from item to item.
const (
	// ClaimRenewal is how often an installation writes its claim again while its groups wait.
	ClaimRenewal = time.Minute
	// ClaimExpiry is how long a claim counts after its last renewal: a claim of an installation
	// that was removed or is stopped then counts no more, and the next writer removes it.
	ClaimExpiry = 2 * ClaimRenewal
)

// InstallationOf names the installation that watches these namespaces: the first in
// alphabetical order, as installations sharing a lock watch different namespaces; empty for one
// that watches all namespaces (no namespace given), which sees every waiter and claims nothing.
func InstallationOf(namespaces []string) string {
	if len(namespaces) == 0 {
		return ""
	}
	return slices.Min(namespaces)
}

// ClaimOf is the installation's claim on a lock, of the groups naming the lock that it sees: how
// many wait (Waits) and since when the longest has; nil when none does. renewedAt is the time the
// claim says it was written.
func ClaimOf(installation string, naming []v1alpha1.OaatGroup, renewedAt time.Time) *v1alpha1.InstallationClaim {
	var claim *v1alpha1.InstallationClaim
	for i := range naming {
		g := &naming[i]
		if !Waits(g) {
			continue
		}
		if claim == nil {
			claim = &v1alpha1.InstallationClaim{Installation: installation, Since: g.Status.LockWait.Since}
		}
		claim.Waiting++
		if g.Status.LockWait.Since.Before(&claim.Since) {
			claim.Since = g.Status.LockWait.Since
		}
	}
	if claim != nil {
		claim.RenewedAt = metav1.NewTime(renewedAt)
	}
	return claim
}

// Counts reports whether a claim still counts at now: renewed within ClaimExpiry.
func Counts(c v1alpha1.InstallationClaim, now time.Time) bool {
	return now.Sub(c.RenewedAt.Time) < ClaimExpiry
}

// ClaimDue says when the installation's claim on the lock must be written, mine being its claim as
// of now (renewed now, or nil): at once (due) when it appears, goes or moves (another group now
// waits longest) and when it is due for renewal; within the rate limit of the waiting count
// (limited) when only its count of waiting groups changed; never when it is as written. It also
// returns the claims to write: mine in place of the installation's, and the others' that still
// count (the expired ones are removed with it), by installation.
func ClaimDue(lock *v1alpha1.ClusterOaatLock, installation string, mine *v1alpha1.InstallationClaim, now time.Time) (claims []v1alpha1.InstallationClaim, due, limited bool) {
	var written *v1alpha1.InstallationClaim
	for i, c := range lock.Status.InstallationClaims {
		switch {
		case c.Installation == installation:
			written = &lock.Status.InstallationClaims[i]
		case Counts(c, now):
			claims = append(claims, c)
		}
	}
	if mine != nil {
		claims = append(claims, *mine)
	}
	slices.SortFunc(claims, func(a, b v1alpha1.InstallationClaim) int { return cmp.Compare(a.Installation, b.Installation) })
	switch {
	case (written == nil) != (mine == nil):
		return claims, true, false
	case mine == nil:
		return claims, false, false
	case !written.Since.Equal(&mine.Since) || now.Sub(written.RenewedAt.Time) >= ClaimRenewal:
		return claims, true, false
	}
	return claims, false, written.Waiting != mine.Waiting
}
