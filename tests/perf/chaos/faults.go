package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/hack/devkit"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// frequencies are what spec edits choose from.
var frequencies = []string{"10s", "20s", "30s", "45s", "1m"}

// maxItems bounds how many items a group gets through edits.
const maxItems = 8

// faults counts what the chaos run did.
type faults struct {
	kills, noLeader, podDeletes, edits int
	// evictions counts the live item pods evicted through the Eviction API; evicted names them.
	evictions int
	evicted   map[string]bool
	// lockRecreates counts the shared locks deleted and created again, heldRecreates those that
	// held a slot when deleted.
	lockRecreates, heldRecreates int
	// lockResizes counts the changes of a lock's capacity, lockCuts those that left it below its
	// holders; lockAdds and lockRemoves the locks added to and removed from a group's spec.locks,
	// heldEdits those made while the group had a run.
	lockResizes, lockCuts, lockAdds, lockRemoves, heldEdits int
	// lockWindows counts the resizes that gave a lock a capacity window of the next minute.
	lockWindows int
	// clusterRecreates, clusterResizes and clusterRelocks count those of the faults above that
	// were on the cluster lock.
	clusterRecreates, clusterResizes, clusterRelocks int
	// bKills counts the SIGKILLs of the second installation's leader, bNoLeader the instants
	// chosen when none led.
	bKills, bNoLeader int
	apiserverDown     time.Duration
}

// unleash applies faults until the chaos window ends: SIGKILL of the leader, SIGSTOP of the
// leader for longer than its Lease, SIGKILL of the second installation's leader, deletion of a live item pod, its
// eviction through the Eviction API (as a node drain does), a spec edit, a slow spell (the
// replicas' pod watches lag), a shared lock deleted and created again, a lock's capacity changed
// and a lock added to or removed from a group, each at random intervals, and one restart of the API server in
// the middle third of the window. Throughout, the API proxy faults a fraction of pod creations.
func (c *chaos) unleash(ctx context.Context) error {
	now := time.Now()
	end := now.Add(c.cfg.window)
	nextKill := now.Add(c.between(c.cfg.killMin, c.cfg.killMax))
	nextDelete := now.Add(c.between(c.cfg.deleteEvery/2, c.cfg.deleteEvery*3/2))
	nextEvict := now.Add(c.between(c.cfg.evictEvery/2, c.cfg.evictEvery*3/2))
	nextEdit := now.Add(c.between(c.cfg.editEvery/2, c.cfg.editEvery*3/2))
	nextRecreate := now.Add(c.between(c.cfg.recreateEvery/2, c.cfg.recreateEvery*3/2))
	nextResize := now.Add(c.between(c.cfg.resizeEvery/2, c.cfg.resizeEvery*3/2))
	nextRelock := now.Add(c.between(c.cfg.relockEvery/2, c.cfg.relockEvery*3/2))
	nextPause := now.Add(c.between(c.cfg.pauseEvery/2, c.cfg.pauseEvery*3/2))
	nextSlow := now.Add(c.between(c.cfg.slowEvery/2, c.cfg.slowEvery*3/2))
	nextBKill := now.Add(c.between(c.cfg.bKillEvery/2, c.cfg.bKillEvery*3/2))
	restartAt := now.Add(c.cfg.window/3 + c.between(0, c.cfg.window/3))
	restarted := false
	var leaderless time.Time // since when no replica leads; zero while one does
	defer c.pauser.resumeAll()
	for now = time.Now(); now.Before(end); now = time.Now() {
		leaderless = c.trackLeader(ctx, leaderless, now)
		c.pauser.tick(now)
		var err error
		switch {
		case c.cfg.slowEvery > 0 && !now.Before(nextSlow):
			if c.slow.since.IsZero() {
				nextSlow = now.Add(c.cfg.slowFor)
			} else {
				nextSlow = now.Add(c.between(c.cfg.slowEvery/2, c.cfg.slowEvery*3/2))
			}
			c.toggleSlow(now)
		case c.cfg.pauseEvery > 0 && !now.Before(nextPause) && !c.pauser.busy():
			nextPause = now.Add(c.between(c.cfg.pauseEvery/2, c.cfg.pauseEvery*3/2))
			if !c.pauser.arm(ctx, c.cfg.leaseDuration+c.between(4*time.Second, 10*time.Second)) {
				nextPause = now.Add(5 * time.Second) // during a failover: try again soon
			}
		case !restarted && !now.Before(restartAt):
			restarted = true
			err = c.restartAPIServer(ctx)
		case !now.Before(nextKill) && !c.pauser.busy(): // a kill would spoil the pause
			nextKill = now.Add(c.between(c.cfg.killMin, c.cfg.killMax))
			err = c.killLeader(ctx)
		case c.second != nil && c.cfg.bKillEvery > 0 && !now.Before(nextBKill):
			nextBKill = now.Add(c.between(c.cfg.bKillEvery/2, c.cfg.bKillEvery*3/2))
			err = c.killSecond(ctx)
		case !now.Before(nextDelete):
			nextDelete = now.Add(c.between(c.cfg.deleteEvery/2, c.cfg.deleteEvery*3/2))
			err = c.deletePod(ctx)
		case c.cfg.evictEvery > 0 && !now.Before(nextEvict):
			nextEvict = now.Add(c.between(c.cfg.evictEvery/2, c.cfg.evictEvery*3/2))
			err = c.evictPod(ctx)
		case !now.Before(nextEdit):
			nextEdit = now.Add(c.between(c.cfg.editEvery/2, c.cfg.editEvery*3/2))
			err = c.editGroup(ctx)
		case c.cfg.recreateEvery > 0 && !now.Before(nextRecreate):
			nextRecreate = now.Add(c.between(c.cfg.recreateEvery/2, c.cfg.recreateEvery*3/2))
			err = c.recreateLock(ctx)
		case c.cfg.resizeEvery > 0 && !now.Before(nextResize):
			nextResize = now.Add(c.between(c.cfg.resizeEvery/2, c.cfg.resizeEvery*3/2))
			err = c.resizeLock(ctx)
		case c.cfg.relockEvery > 0 && !now.Before(nextRelock):
			nextRelock = now.Add(c.between(c.cfg.relockEvery/2, c.cfg.relockEvery*3/2))
			err = c.relockGroup(ctx)
		}
		if err != nil {
			c.logf("fault failed: %v", err)
		}
		if err := perfkit.Sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	c.endSlow(time.Now())
	c.proxy.picker.stop()
	if !leaderless.IsZero() {
		c.history.pause(leaderless, time.Now())
	}
	return nil
}

// trackLeader records, as pauses, the intervals during which no replica leads; since is when the
// current one began, zero when a replica leads. It returns the new since.
func (c *chaos) trackLeader(ctx context.Context, since, now time.Time) time.Time {
	leads := c.replicas.leader(ctx) != nil
	switch {
	case !leads && since.IsZero():
		return now
	case leads && !since.IsZero():
		c.history.pause(since, now)
		return time.Time{}
	}
	return since
}

// between returns a random duration in [lo, hi).
func (c *chaos) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)))
}

func (c *chaos) killLeader(ctx context.Context) error {
	leader := c.replicas.leader(ctx)
	if leader == nil {
		c.faults.noLeader++
		return nil
	}
	c.pauser.disarm(leader)
	if err := c.replicas.kill(leader); err != nil {
		return err
	}
	c.faults.kills++
	c.logf("SIGKILL leader %s (pid %d)", leader.Name, leader.PID())
	return nil
}

// deletePod deletes a random live item pod of a namespace of the run, as a user would.
func (c *chaos) deletePod(ctx context.Context) error {
	pod, err := c.randomLivePod(ctx)
	if pod == nil || err != nil {
		return err
	}
	if err := client.IgnoreNotFound(c.env.Client.Delete(ctx, pod)); err != nil {
		return err
	}
	c.faults.podDeletes++
	return nil
}

// evictPod evicts a random live item pod of a namespace of the run through the Eviction API, as
// `kubectl drain` does: the API server sets the pod's DisruptionTarget condition, then deletes
// it. Its run must be recorded as interrupted, never as a failure (checkEvictions).
func (c *chaos) evictPod(ctx context.Context) error {
	pod, err := c.randomLivePod(ctx)
	if pod == nil || err != nil {
		return err
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	if err := client.IgnoreNotFound(c.env.Client.SubResource("eviction").Create(ctx, pod, eviction)); err != nil {
		return err
	}
	if c.faults.evicted == nil {
		c.faults.evicted = map[string]bool{}
	}
	c.faults.evicted[pod.Name] = true
	c.faults.evictions++
	return nil
}

// randomLivePod returns a random live item pod of a namespace of the run, nil when there is none.
func (c *chaos) randomLivePod(ctx context.Context) (*corev1.Pod, error) {
	var live []*corev1.Pod
	for _, ns := range c.namespaces() {
		pods := &corev1.PodList{}
		if err := c.env.Client.List(ctx, pods, client.InNamespace(ns), client.HasLabels{v1alpha1.LabelGroup}); err != nil {
			return nil, err
		}
		for i := range pods.Items {
			if !podbuild.Terminal(&pods.Items[i]) && pods.Items[i].DeletionTimestamp == nil {
				live = append(live, &pods.Items[i])
			}
		}
	}
	if len(live) == 0 {
		return nil, nil
	}
	return live[c.rng.IntN(len(live))], nil
}

// editGroup adds an item to a random group (of any namespace of the run), removes one, or changes
// its frequency.
func (c *chaos) editGroup(ctx context.Context) error {
	group := c.plan[c.rng.IntN(len(c.plan))]
	name := group.name
	op := c.rng.IntN(3)
	var freq string
	var added, removed string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		g := &v1alpha1.OaatGroup{}
		if err := c.env.Client.Get(ctx, group.key(), g); err != nil {
			return err
		}
		added, removed, freq = "", "", ""
		switch {
		case op == 0 && len(g.Spec.OaatItems) < maxItems:
			c.itemSerial++
			added = "added-" + strconv.Itoa(c.itemSerial)
			g.Spec.OaatItems = append(g.Spec.OaatItems, added)
		case op == 1 && len(g.Spec.OaatItems) > 2:
			i := c.rng.IntN(len(g.Spec.OaatItems))
			removed = g.Spec.OaatItems[i]
			g.Spec.OaatItems = slices.Delete(g.Spec.OaatItems, i, i+1)
		default:
			freq = frequencies[c.rng.IntN(len(frequencies))]
			g.Spec.Frequency = v1alpha1.Duration(freq)
		}
		return c.env.Client.Update(ctx, g)
	})
	if err != nil {
		return fmt.Errorf("editing group %s: %w", group.key(), err)
	}
	now := time.Now()
	switch {
	case added != "":
		c.history.add(name, added, now)
	case removed != "":
		c.history.remove(name, removed, now)
	default:
		d, _ := time.ParseDuration(freq)
		c.history.setFrequency(name, d, now)
	}
	c.faults.edits++
	return nil
}

// restartAPIServer stops kube-apiserver (SIGTERM, SIGKILL after 10 s: a graceful shutdown waits
// for its long-running requests much longer) and lets cluster.sh up start it again: up starts only
// the components that do not run.
func (c *chaos) restartAPIServer(ctx context.Context) error {
	pid, ok := c.env.Cluster.PIDs()["kube-apiserver"]
	if !ok {
		return fmt.Errorf("no pid file of kube-apiserver")
	}
	start := time.Now()
	c.logf("stopping kube-apiserver (pid %d)", pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return err
	}
	for devkit.ProcessAlive(pid) && time.Since(start) < 10*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	if devkit.ProcessAlive(pid) {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
	}
	if _, err := c.env.Cluster.Up(ctx); err != nil {
		return err
	}
	c.faults.apiserverDown = time.Since(start)
	c.history.pause(start, time.Now())
	c.logf("kube-apiserver back after %s", c.faults.apiserverDown.Round(time.Millisecond))
	return nil
}
