package main

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// pauser stops the leader with SIGSTOP for longer than its Lease lasts, as a long GC pause or a
// VM stall would, then lets it go on with SIGCONT: it resumes believing, for a moment, that it
// still leads, while another replica has taken the Lease. To stop it where that hurts most, the
// pause is armed on the API proxy: the leader is stopped right after the API server answered its
// status write of a new run's intent and before it reads that answer, so that its next step is
// the pod's creation. If no such write comes within armWait, it is stopped wherever it is.
type pauser struct {
	replicas *replicas
	proxy    *apiProxy
	log      func(format string, args ...any)

	mu        sync.Mutex
	armedFor  *perfkit.Manager
	armedAt   time.Time
	stopped   *perfkit.Manager
	resumeAt  time.Time
	resumedAt time.Time
	pauseFor  time.Duration // set by arm for the pause to come
	// targeted pauses stopped the leader after an intent's write; untargeted ones anywhere.
	targeted, untargeted, noLeader int
	longest                        time.Duration
	intents                        []string // "group/pod" of the targeted pauses
}

// armWait bounds how long an armed pause waits for an intent's write.
const armWait = 20 * time.Second

// aftermath is how long after a SIGCONT the pause still counts as under way: the resumed replica
// acts, or gives up, within it, and a SIGKILL then would end its test early.
const aftermath = 10 * time.Second

// busy reports whether a pause is armed or under way.
func (p *pauser) busy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armedFor != nil || p.stopped != nil || time.Since(p.resumedAt) < aftermath
}

// arm arms a pause of the current leader for d; false when no replica leads.
func (p *pauser) arm(ctx context.Context, d time.Duration) bool {
	leader := p.replicas.leader(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if leader == nil {
		p.noLeader++
		return false
	}
	p.armedFor, p.armedAt, p.pauseFor = leader, time.Now(), d
	p.proxy.arm(leader.Name, func(group, pod string) { p.fire(leader, group+"/"+pod) })
	return true
}

// disarm cancels an armed pause of m, which is about to be killed.
func (p *pauser) disarm(m *perfkit.Manager) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armedFor == m {
		p.proxy.disarm(m.Name)
		p.armedFor = nil
	}
}

// fire stops m; intent names the run whose intent it has just written, empty when untargeted.
func (p *pauser) fire(m *perfkit.Manager, intent string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armedFor != m {
		return
	}
	p.armedFor = nil
	pid, err := p.replicas.pause(m)
	if err != nil {
		p.log("SIGSTOP %s: %v", m.Name, err)
		return
	}
	p.stopped, p.resumeAt = m, time.Now().Add(p.pauseFor)
	p.longest = max(p.longest, p.pauseFor)
	if intent != "" {
		p.targeted++
		p.intents = append(p.intents, intent)
		p.log("SIGSTOP leader %s (pid %d) for %s, right after it wrote the intent of %s", m.Name, pid, p.pauseFor, intent)
	} else {
		p.untargeted++
		p.log("SIGSTOP leader %s (pid %d) for %s (no intent written within %s)", m.Name, pid, p.pauseFor, armWait)
	}
}

// tick resumes a stopped replica whose time is up, and stops an armed leader that wrote no
// intent within armWait.
func (p *pauser) tick(now time.Time) {
	p.mu.Lock()
	armed, since := p.armedFor, p.armedAt
	p.mu.Unlock()
	if armed != nil && now.Sub(since) > armWait {
		p.proxy.disarm(armed.Name)
		p.fire(armed, "")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped != nil && !now.Before(p.resumeAt) {
		p.resumeLocked()
	}
}

// resumeAll resumes a stopped replica and cancels an armed pause, at the end of the faults.
func (p *pauser) resumeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armedFor != nil {
		p.proxy.disarm(p.armedFor.Name)
		p.armedFor = nil
	}
	if p.stopped != nil {
		p.resumeLocked()
	}
}

func (p *pauser) resumeLocked() {
	if err := p.replicas.resume(p.stopped); err != nil {
		p.log("SIGCONT %s: %v", p.stopped.Name, err)
	} else {
		p.log("SIGCONT %s", p.stopped.Name)
	}
	p.stopped, p.resumedAt = nil, time.Now()
}

func (p *pauser) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("leader SIGSTOPs for longer than its Lease, then SIGCONT: %d right after writing a run's intent, %d elsewhere (no leader at %d chosen instants); longest %s",
		p.targeted, p.untargeted, p.noLeader, p.longest.Round(time.Second))
}

// pause sends SIGSTOP to m and marks it paused: leader() does not ask it, kill() leaves it alone.
func (r *replicas) pause(m *perfkit.Manager) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !m.Running() {
		return 0, fmt.Errorf("%s does not run", m.Name)
	}
	pid := m.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return 0, err
	}
	r.paused[m] = pid
	return pid, nil
}

// resume sends SIGCONT to m, paused by pause.
func (r *replicas) resume(m *perfkit.Manager) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	pid, ok := r.paused[m]
	if !ok {
		return nil
	}
	delete(r.paused, m)
	if !m.Running() || m.PID() != pid {
		return nil
	}
	return syscall.Kill(pid, syscall.SIGCONT)
}
