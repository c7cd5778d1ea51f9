package locks

import (
	"cmp"
	"slices"
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Installations of the operator that watch only some namespaces cannot read each other's groups.
// When they share a ClusterOaatLock, each one's lock reconciler writes the holders of its own
// groups and, in the lock's status.installationClaims, how many of its groups wait for it and
// since when the longest has waited; each counts the entries of the others like waiters it cannot
// see (Review.foreignBefore): a freed slot goes to the group that has waited longest, whichever
// installation runs it, instead of staying with a group that hands it from item to item. Their
// writes of the one status are ordered by its resourceVersion, as any two writers'.
const (
	// WaitingRenewal is how often an installation writes its entry again while its groups wait.
	WaitingRenewal = time.Minute
	// WaitingExpiry is how long an entry counts after its last renewal: the entry of an
	// installation that was removed or is stopped then counts no more, and the next writer
	// removes it.
	WaitingExpiry = 2 * WaitingRenewal
)

// InstallationOf names the installation that watches these namespaces: the first in
// alphabetical order, as installations sharing a lock watch different namespaces; empty for one
// that watches all namespaces (no namespace given), which sees every waiter and writes no entry.
func InstallationOf(namespaces []string) string {
	if len(namespaces) == 0 {
		return ""
	}
	return slices.Min(namespaces)
}

// Counts reports whether an entry still counts at now: renewed within WaitingExpiry.
func Counts(w v1alpha1.InstallationWaiting, now time.Time) bool {
	return now.Sub(w.RenewedAt.Time) < WaitingExpiry
}

// WaitingDue says when the installation's entry of the lock's waiting must be written, mine being
// its entry as of now (Review.Waiting, renewed now, or nil): at once (due) when it appears, goes
// or moves (another group now waits longest) and when it is due for renewal; within the rate limit
// of the waiting count (limited) when only its count of waiting groups changed; never when it is
// as written. It also returns the entries to write: mine in place of the installation's, and the
// others' that still count (the expired ones are removed with it), by installation.
func WaitingDue(lock *v1alpha1.ClusterOaatLock, installation string, mine *v1alpha1.InstallationWaiting, now time.Time) (entries []v1alpha1.InstallationWaiting, due, limited bool) {
	var written *v1alpha1.InstallationWaiting
	for i, w := range lock.Status.InstallationsWaiting {
		switch {
		case w.Installation == installation:
			written = &lock.Status.InstallationsWaiting[i]
		case Counts(w, now):
			entries = append(entries, w)
		}
	}
	if mine != nil {
		entries = append(entries, *mine)
	}
	slices.SortFunc(entries, func(a, b v1alpha1.InstallationWaiting) int { return cmp.Compare(a.Installation, b.Installation) })
	switch {
	case (written == nil) != (mine == nil):
		return entries, true, false
	case mine == nil:
		return entries, false, false
	case !written.Since.Equal(&mine.Since) || now.Sub(written.RenewedAt.Time) >= WaitingRenewal:
		return entries, true, false
	}
	return entries, false, written.Waiting != mine.Waiting
}
