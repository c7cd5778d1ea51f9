package statusview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/forecast"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// WriteForecast writes what `kubectl oaat plan` shows of a group's forecast: a heading, one row
// per predicted run (start, end, item, what to know of it), the rounds, the deadlines missed, why
// the forecast ended, and the assumptions it made.
func WriteForecast(w io.Writer, g *v1alpha1.OaatGroup, f forecast.Forecast, risks []forecast.Risk) error {
	fmt.Fprintf(w, "%s/%s  forecast for %s from %s  %s\n", g.Namespace, g.Name,
		duration.HumanDuration(f.Until.Sub(f.From)), clock(f.From), Summary(g))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  START\tEND\tITEM\tNOTE")
	for _, r := range f.Runs {
		fmt.Fprintln(tw, strings.TrimRight(fmt.Sprintf("  %s\t%s\t%s\t%s", at(r.Start, f.From), at(r.End, f.From), Item(r.Item), runNote(r)), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(f.Runs) == 0 {
		fmt.Fprintln(w, "  no run predicted")
	}
	for _, r := range f.Rounds {
		fmt.Fprintf(w, "  round: %s\n", roundLine(r, f.From))
	}
	for _, r := range risks {
		fmt.Fprintf(w, "  at risk: %s\n", r)
	}
	fmt.Fprintf(w, "  forecast ends: %s\n", stopLine(f))
	return writeAssumptions(w, g, f)
}

// runNote says what to know of a predicted run.
func runNote(r forecast.Run) string {
	var notes []string
	if r.Verify {
		notes = append(notes, "verification of its last success (assumed as long as its runs)")
	}
	if r.Going {
		notes = append(notes, "running now")
	}
	if r.OnDemandRun != "" {
		notes = append(notes, "on demand: "+r.OnDemandRun)
	}
	if r.Ties > 1 {
		notes = append(notes, fmt.Sprintf("picked at random among %d equally due: the operator's pick may differ", r.Ties))
	}
	if r.Result == v1alpha1.ResultInterrupted {
		notes = append(notes, "interrupted by a blackout window with stopRunning")
	}
	if r.End.IsZero() {
		notes = append(notes, "ends beyond the forecast")
	}
	return strings.Join(notes, "; ")
}

// roundLine says when a round started and ends, against the next round.
func roundLine(r forecast.Round, from time.Time) string {
	text := "started " + at(r.StartedAt, from)
	if r.EndsAt.IsZero() {
		text += ", does not end within the forecast"
	} else {
		text += ", ends " + at(r.EndsAt, from)
	}
	if !r.NextRoundAt.IsZero() {
		text += "; next round " + at(r.NextRoundAt, from)
	}
	if r.Overrun {
		text += ": late, it merges into the next round"
	}
	if !r.BlackoutAt.IsZero() {
		text += "; its items wait for a blackout window from " + at(r.BlackoutAt, from)
	}
	return text
}

// stopLine says why the forecast ended.
func stopLine(f forecast.Forecast) string {
	switch f.Stop {
	case forecast.StopIdle:
		return "nothing more runs until something changes (the group is done, suspended, not Ready, or waits for a change)"
	case forecast.StopLockHeld:
		return fmt.Sprintf("at %s, waiting for a lock that other groups hold (taken to stay held)", clock(f.ReachedAt))
	case forecast.StopPassLimit:
		return fmt.Sprintf("at %s, after %d passes (the limit)", clock(f.ReachedAt), f.Passes)
	case forecast.StopHorizon, forecast.StopAssessed:
		return "the horizon " + clock(f.Until)
	}
	return "the horizon " + clock(f.Until) // a forecast of a later version, read as one that reached its horizon
}

// runBases says what an item's assumed run time rests on, by its basis.
var runBases = map[forecast.RunBasis]string{
	forecast.BasisLongest:     "longest recent run",
	forecast.BasisGroupMedian: "no run recorded: the group's median",
	forecast.BasisDefault:     "no run recorded: default",
}

// writeAssumptions writes what the forecast took for granted.
func writeAssumptions(w io.Writer, g *v1alpha1.OaatGroup, f forecast.Forecast) error {
	times := make([]string, 0, len(f.RunTimes))
	for _, rt := range f.RunTimes {
		times = append(times, fmt.Sprintf("%s %s (%s)", Item(rt.Item), rt.Run, runBases[rt.Basis]))
	}
	lines := []string{
		"run times: " + strings.Join(times, ", "),
		"every run succeeds in its run time; failures, cool-offs and the circuit breaker's probes are not predicted",
		"the order and the waits are the operator's planner's own, played forward on a simulated clock",
	}
	if g.Spec.Schedule != "" {
		lines = append(lines, fmt.Sprintf("schedule %q in %s", g.Spec.Schedule, groupspec.TimeZoneOf(g)))
	}
	if n := len(g.Spec.BlackoutWindows); n > 0 {
		lines = append(lines, fmt.Sprintf("blackout windows: the %d of spec.blackoutWindows", n))
	}
	if keys := g.Spec.LockKeys(); len(keys) > 0 {
		lines = append(lines, "locks "+strings.Join(keys, ", ")+": as held now; other groups' slots are not given back within the forecast; a capacity schedule (spec.capacitySchedule) raises and cuts a lock's capacity on time")
	}
	for _, lc := range f.Capacities {
		c := lc.Capacity
		text := fmt.Sprintf("lock %s: capacity %d now by its spec.capacitySchedule", lc.Lock, c.InForce)
		if !c.NextAt.IsZero() {
			text += fmt.Sprintf(", %d from %s", c.Next, at(c.NextAt, f.From))
		}
		lines = append(lines, text)
	}
	lines = append(lines, "on-demand runs: those queued now; none added")
	if _, err := fmt.Fprintln(w, "  assumptions:"); err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "    - %s\n", l); err != nil {
			return err
		}
	}
	return nil
}

// at is an instant of the forecast with its offset from the start; "-" for none.
func at(t, from time.Time) string {
	if t.IsZero() {
		return "-"
	}
	offset := t.Sub(from)
	sign := "+"
	if offset < 0 {
		sign, offset = "-", -offset
	}
	return fmt.Sprintf("%s (%s%s)", clock(t), sign, duration.HumanDuration(offset))
}

// clock is an instant in UTC, to the second.
func clock(t time.Time) string { return t.UTC().Format(time.RFC3339) }
