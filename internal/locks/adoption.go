package locks

import (
	"time"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// DefaultAdoptionWindow is how long, by default, a ClusterOaatLock gives no slot after its
// creation to an installation that watches only some namespaces (Input.AdoptionWindow; the
// manager's --cluster-lock-adoption-window). Such an installation sees the runs of the
// others only through the lock's status.holders, and a lock deleted and created again (kubectl
// replace --force, a GitOps re-create, a restore) comes back without them: each installation
// lists its live runs again at its next review, but one without a leader at that moment (a
// failover: the Lease's 15 s and a cache sync) does so only once it has one again. Until the window
// has passed, the runs of the others may be missing from the lock, so it waits; its own groups'
// runs it sees, and counts, whatever the lock says. An installation of all namespaces sees every
// run and waits for nothing. The lock cannot tell a re-create from a first create: a new
// ClusterOaatLock also gives its first slot to such an installation only after the window. The
// default covers a failover with the manager's leader election (a Lease of 15 s) four times over.
const DefaultAdoptionWindow = time.Minute

// AdoptedAt is when the lock begins to grant slots to the groups of the installation that
// reviews it (empty for one of all namespaces): window after its creation for a ClusterOaatLock
// and an installation of some namespaces, at once (the zero time) otherwise.
func AdoptedAt(lock v1alpha1.Lock, installation string, window time.Duration) time.Time {
	if _, ok := lock.(*v1alpha1.ClusterOaatLock); !ok || installation == "" {
		return time.Time{}
	}
	return lock.GetCreationTimestamp().Add(window)
}
