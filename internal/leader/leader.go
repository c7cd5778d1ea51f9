// Package leader lets the operator check, right before an action that must never be taken twice
// (creating an item pod), that it still holds the leader-election Lease. controller-runtime does
// not expose its elector: a leader paused (a long GC, a stalled VM) between its decision and its
// action wakes up still believing it leads, while another replica may have taken over. The Lease
// on the API server says who leads; the manager is given a lock with a known identity (NewLock)
// so that the Lease can be compared with it.
package leader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrNotLeader says that this process does not hold the Lease (any more).
var ErrNotLeader = errors.New("this process does not hold the leader-election lease")

// DefaultMargin is how long before the Lease would expire a holder stops acting on it. The
// elector renews the Lease every second (RetryPeriod, cmd/main.go) and gives up after 10 s without
// renewal (controller-runtime's RenewDeadline), and another candidate takes over 15 s (LeaseDuration) after it
// last saw a renewal: holding a Lease renewed less than 10 s ago leaves 5 s for the action to
// reach the API server.
const DefaultMargin = 5 * time.Second

// inClusterNamespaceFile holds the namespace of a pod's ServiceAccount.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// InClusterNamespace is the namespace the process runs in, that of its pod's ServiceAccount.
func InClusterNamespace() (string, error) {
	data, err := os.ReadFile(inClusterNamespaceFile)
	if err != nil {
		return "", fmt.Errorf("not running in a cluster: %w", err)
	}
	return strings.TrimSpace(string(data)), nil
}

// Identity names the Lease of the leader election and this process's identity in it.
type Identity struct {
	// Lease is the namespace and name of the Lease.
	Lease client.ObjectKey
	// Holder is this process's identity, the Lease's holderIdentity while it leads.
	Holder string
}

// NewLock returns the resource lock of the manager's leader election (a Lease named name in
// namespace, or in the namespace the process runs in when empty), with a known identity (the host
// name and a random suffix, as controller-runtime makes it).
func NewLock(cfg *rest.Config, namespace, name string) (resourcelock.Interface, Identity, error) {
	if namespace == "" {
		ns, err := InClusterNamespace()
		if err != nil {
			return nil, Identity{}, fmt.Errorf("no leader election namespace given: %w", err)
		}
		namespace = ns
	}
	host, err := os.Hostname()
	if err != nil {
		return nil, Identity{}, fmt.Errorf("reading the host name: %w", err)
	}
	id := Identity{Lease: client.ObjectKey{Namespace: namespace, Name: name}, Holder: host + "_" + string(uuid.NewUUID())}
	// A request of the elector must end well before the renew deadline (10 s), as
	// controller-runtime sets it.
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	cfg.Timeout = 5 * time.Second
	coordination, err := coordinationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, Identity{}, fmt.Errorf("creating the leader election client: %w", err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, name, nil, coordination,
		resourcelock.ResourceLockConfig{Identity: id.Holder})
	if err != nil {
		return nil, Identity{}, fmt.Errorf("creating the leader election lock: %w", err)
	}
	return lock, id, nil
}

// Guard checks that this process holds the Lease. A nil Guard (no leader election: tests, a
// single process) lets everything through.
type Guard struct {
	// Reader reads the Lease from the API server, not from a cache.
	Reader client.Reader
	// Identity is the Lease and this process's identity in it.
	Identity Identity
	// Clock is the time the Lease's expiry is compared with.
	Clock clock.PassiveClock
	// Margin is how long before the Lease's expiry the holder stops acting (DefaultMargin when
	// zero).
	Margin time.Duration
	// OnLost, when set, is called once, the first time a check finds that this process does not
	// hold the Lease. The elector itself notices only after its renew deadline (up to 10 s), and
	// a process that lost the Lease must not go on deciding runs meanwhile: the manager exits, as
	// it does when the elector gives up.
	OnLost func(error)

	lost sync.Once
}

// Check returns nil when this process holds the Lease, else an error that wraps ErrNotLeader (or
// the error of reading the Lease).
func (g *Guard) Check(ctx context.Context) error {
	if g == nil {
		return nil
	}
	lease := &coordinationv1.Lease{}
	if err := g.Reader.Get(ctx, g.Identity.Lease, lease); err != nil {
		return fmt.Errorf("reading the leader election lease %s: %w", g.Identity.Lease, err)
	}
	margin := g.Margin
	if margin == 0 {
		margin = DefaultMargin
	}
	err := Holds(lease, g.Identity.Holder, g.Clock.Now(), margin)
	if errors.Is(err, ErrNotLeader) && g.OnLost != nil {
		g.lost.Do(func() { g.OnLost(err) })
	}
	return err
}

// Holds returns nil when the Lease is held by holder and was renewed recently enough that it is
// still valid at now plus margin; else why not, wrapping ErrNotLeader.
func Holds(lease *coordinationv1.Lease, holder string, now time.Time, margin time.Duration) error {
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity != holder {
		current := "nobody"
		if spec.HolderIdentity != nil && *spec.HolderIdentity != "" {
			current = *spec.HolderIdentity
		}
		return fmt.Errorf("%w: %s holds it", ErrNotLeader, current)
	}
	if spec.RenewTime == nil || spec.LeaseDurationSeconds == nil {
		return fmt.Errorf("%w: the lease has no renew time or duration", ErrNotLeader)
	}
	expires := spec.RenewTime.Add(time.Duration(*spec.LeaseDurationSeconds) * time.Second)
	if !now.Add(margin).Before(expires) {
		return fmt.Errorf("%w: it was last renewed at %s and expires at %s", ErrNotLeader,
			spec.RenewTime.UTC().Format(time.RFC3339), expires.UTC().Format(time.RFC3339))
	}
	return nil
}
