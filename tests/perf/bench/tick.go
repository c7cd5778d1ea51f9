package main

import (
	"fmt"
	"time"

	"github.com/oaat-io/oaat-operator/tests/perf/perfkit"
)

// tickStarts are the starts of groups at one tick of their schedule: each group's first pod.
type tickStarts struct {
	// fromTick runs from the tick to each started group's first pod.
	fromTick perfkit.Latencies
	// fromRound runs from each started group's own round start (the tick plus its jitter, as
	// its status.nextRoundAt announced it) to its first pod.
	fromRound perfkit.Latencies
	// missing counts the groups without a pod.
	missing int
	// busiest is the largest number of first pods in one second after the tick (whole seconds
	// counted from the tick), at busiestSecond.
	busiest, busiestSecond int
	// early lists the pods created before their group's round started: a start before due.
	early []string
}

// spread is the time between the first and the last group's start.
func (t tickStarts) spread() time.Duration {
	return t.fromTick.Max() - t.fromTick.Percentile(0)
}

// summary is the starts' distribution, the busiest second and the spread.
func (t tickStarts) summary() string {
	l := t.fromTick
	if len(l) == 0 {
		return "no group started"
	}
	return fmt.Sprintf("p0 %s, p50 %s, p90 %s, p99 %s, max %s; spread (max - p0) %s; at most %d first pods in one second (second %d after the tick); %d groups started, %d did not",
		perfkit.Ms(l.Percentile(0)), perfkit.Ms(l.Percentile(50)), perfkit.Ms(l.Percentile(90)), perfkit.Ms(l.Percentile(99)),
		perfkit.Ms(l.Max()), perfkit.Ms(t.spread()), t.busiest, t.busiestSecond, len(l), t.missing)
}

// measureTick finds each group's first pod seen after from (pods of earlier ticks are before it)
// and measures it against the tick and against the group's round start; a group without a known
// round start is measured against the tick. A pod seen before its group's round start is early.
func measureTick(pods []perfkit.PodLife, groups []string, tick, from time.Time, roundStart map[string]time.Time) tickStarts {
	first := map[string]perfkit.PodLife{}
	for _, p := range pods {
		if p.SeenCreated.Before(from) {
			continue
		}
		if f, ok := first[p.Group]; !ok || p.SeenCreated.Before(f.SeenCreated) {
			first[p.Group] = p
		}
	}
	var t tickStarts
	perSecond := map[int]int{}
	for _, g := range groups {
		p, ok := first[g]
		if !ok {
			t.missing++
			continue
		}
		start, ok := roundStart[g]
		if !ok {
			start = tick
		}
		if p.SeenCreated.Before(start) {
			t.early = append(t.early, fmt.Sprintf("%s/%s seen %s, before its round started at %s",
				p.Namespace, p.Name, p.SeenCreated.Format(time.RFC3339Nano), start.Format(time.RFC3339)))
		}
		d := p.SeenCreated.Sub(tick)
		t.fromTick = append(t.fromTick, d)
		t.fromRound = append(t.fromRound, p.SeenCreated.Sub(start))
		second := int(d / time.Second)
		if d < 0 {
			second-- // a start before the tick counts in the second before it
		}
		perSecond[second]++
		if n := perSecond[second]; n > t.busiest || (n == t.busiest && second < t.busiestSecond) {
			t.busiest, t.busiestSecond = n, second
		}
	}
	return t
}

// nextMinute is the first whole minute at or after t.
func nextMinute(t time.Time) time.Time {
	m := t.Truncate(time.Minute)
	if m.Before(t) {
		m = m.Add(time.Minute)
	}
	return m
}

// dailyAt is a cron expression that ticks once a day, at t's hour and minute in UTC.
func dailyAt(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%d %d * * *", t.Minute(), t.Hour())
}
