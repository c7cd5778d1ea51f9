package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/hack/devkit"
)

// leaseRole is config/rbac's leader election Role as config/local names it in
// devkit.OperatorNamespace: the rights on the operator's own Lease.
const leaseRole = "oaat-operator-leader-election-role"

// startSecond starts the second installation: bReplicaCount manager process(es) that watch
// bNamespace only (WATCH_NAMESPACE) and elect their leader with a Lease in bLeaseNamespace, where
// the operator's ServiceAccount is granted the rights of config/rbac's leader election Role, as a
// second install of config/default there would grant them. They talk to the API server directly,
// not through the API proxy, and run as the same ServiceAccount, whose manager rights are bound
// cluster-wide. It waits until one leads, and returns the function that stops them.
func (c *chaos) startSecond(ctx context.Context) (func(), error) {
	if err := c.grantLease(ctx); err != nil {
		return nil, err
	}
	inst := installation{prefix: "chaos-b-manager", watch: bNamespace, leaseNamespace: bLeaseNamespace}
	var err error
	if c.second, err = newReplicas(c.env, nil, inst, bReplicaCount, c.cfg.restartDelay, c.logf); err != nil {
		return nil, err
	}
	supCtx, stop := context.WithCancel(ctx)
	supervised := make(chan struct{})
	go func() { c.second.supervise(supCtx); close(supervised) }()
	stopAll := func() { stop(); <-supervised }
	if _, err := c.second.waitLeader(ctx, 2*time.Minute); err != nil {
		stopAll()
		return nil, fmt.Errorf("second installation: %w", err)
	}
	return stopAll, nil
}

// grantLease creates bLeaseNamespace and, in it, a copy of the leader election Role of
// devkit.OperatorNamespace bound to the operator's ServiceAccount.
func (c *chaos) grantLease(ctx context.Context) error {
	if err := c.env.Namespace(ctx, bLeaseNamespace); err != nil {
		return err
	}
	rbac := c.env.Clientset.RbacV1()
	role, err := rbac.Roles(devkit.OperatorNamespace).Get(ctx, leaseRole, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the leader election Role: %w", err)
	}
	copied := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: leaseRole, Namespace: bLeaseNamespace}, Rules: role.Rules}
	if _, err := rbac.Roles(bLeaseNamespace).Create(ctx, copied, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the second installation's leader election Role: %w", err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: leaseRole, Namespace: bLeaseNamespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leaseRole},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Name: devkit.OperatorServiceAccount, Namespace: devkit.OperatorNamespace,
		}},
	}
	if _, err := rbac.RoleBindings(bLeaseNamespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("binding the second installation's leader election Role: %w", err)
	}
	return nil
}

// killSecond sends SIGKILL to the second installation's leader; it is started again after the
// restart delay, and leads again once its old Lease has expired.
func (c *chaos) killSecond(ctx context.Context) error {
	leader := c.second.leader(ctx)
	if leader == nil {
		c.faults.bNoLeader++
		return nil
	}
	if err := c.second.kill(leader); err != nil {
		return err
	}
	c.faults.bKills++
	c.logf("SIGKILL second installation's leader %s (pid %d)", leader.Name, leader.PID())
	return nil
}

// outOfScope is what the manager logs when it asks its cache for an object of a namespace it does
// not watch: a group of the other installation, enqueued from a ClusterOaatLock's holders, or the
// groups of a Namespace whose event it handled.
const outOfScope = "unknown namespace for the cache"

// outOfScopeErrors counts the lines of the replicas' logs (every process of each) that say so.
func outOfScopeErrors(r *replicas) (int, error) {
	n := 0
	for _, m := range r.all {
		data, err := os.ReadFile(m.LogPath)
		if err != nil {
			return n, err
		}
		n += countLines(string(data), outOfScope)
	}
	return n, nil
}

// countLines counts the lines of text that contain s.
func countLines(text, s string) int {
	n := 0
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}
