package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// startProxy starts the API proxy the replicas talk through; its errors go to api-proxy.log in
// the cluster's log directory.
func (c *chaos) startProxy() error {
	logPath := c.env.ManagerLog("api-proxy")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	errLog, err := os.Create(logPath)
	if err != nil {
		return err
	}
	// The proxy's random source is its own: it is used from the proxy's goroutines.
	picker := &faultPicker{rate: c.cfg.createFaults, rng: rand.New(rand.NewPCG(c.cfg.seed, 1))}
	c.proxy, err = newAPIProxy(c.env.OperatorKubeconfig, picker, errLog)
	return err
}

// slowSpells switches the lag of the replicas' pod watches on and off.
type slowSpells struct {
	count int
	total time.Duration
	since time.Time // start of the current spell, zero outside one
}

// toggle starts a spell at now for lag, or ends the current one.
func (c *chaos) toggleSlow(now time.Time) {
	s := &c.slow
	if s.since.IsZero() {
		s.since = now
		s.count++
		c.proxy.lag.set(c.cfg.watchLag)
		c.logf("slow spell: pod watches of the replicas lag by %s", c.cfg.watchLag)
		return
	}
	c.proxy.lag.set(0)
	s.total += now.Sub(s.since)
	s.since = time.Time{}
	c.logf("slow spell over")
}

// endSlow ends a spell under way, at the end of the faults.
func (c *chaos) endSlow(now time.Time) {
	if !c.slow.since.IsZero() {
		c.toggleSlow(now)
	}
}
