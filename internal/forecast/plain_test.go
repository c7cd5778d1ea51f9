package forecast

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
	"github.com/oaat-io/oaat-operator/internal/planner"
	"github.com/oaat-io/oaat-operator/internal/podbuild"
)

// TestPlainMatchesReplay plays random groups, most of them plain, both ways: without Replay (a
// plain group played by plain.go) and with it (every pass through Decide). The forecasts must be
// the same in all that a forecast says (runs, rounds, passes, stop, the time reached, the run
// times and the start), and what Assess reads of them too.
func TestPlainMatchesReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	plain := 0
	const cases = 600
	for c := range cases {
		in, opts := randomGroup(rng)
		name := fmt.Sprintf("case %d: %d items, frequency %s, cool-off %s", c, len(in.Group.Spec.OaatItems), in.Group.Spec.Frequency, in.Group.Spec.FailureCoolOff)
		if isPlain(in, opts) {
			plain++
		}
		played := Predict(in, opts)
		opts.Replay = true
		replayed := Predict(in, opts)
		if diff := cmp.Diff(replayed, played, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: the plain play differs from the replay (-replay +plain):\n%s", name, diff)
		}
		if diff := cmp.Diff(Assess(in.Group, replayed), Assess(in.Group, played), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: the risks differ (-replay +plain):\n%s", name, diff)
		}
	}
	if plain < cases/2 {
		t.Errorf("only %d of %d groups were plain: the test compares too few plain plays", plain, cases)
	}
	t.Logf("%d of %d groups plain", plain, cases)
}

// isPlain reports whether the forecast of in plays the group as plain after its first pass.
func isPlain(in planner.Input, opts Options) bool {
	in.Rand = fixedRand{}
	first := planner.Decide(in)
	s := newSimulation(in, opts)
	s.forecast.RunTimes = s.runTimes(first.Status.Items)
	s.forecast.Passes = 1
	s.observe(first)
	s.apply(first)
	p, err := groupspec.Read(&s.group)
	return s.plain(p, err)
}

// randomGroup is a group of 1 to 30 items with random histories: never run, succeeded, failed
// (some in a row), parked, running; random frequency, cool-off and backoff, sometimes a breaker
// closed after some failures or a run timeout; and a random horizon, pass limit and UntilAssessed.
func randomGroup(rng *rand.Rand) (planner.Input, Options) {
	minutes := func(lo, hi int) time.Duration { return time.Duration(lo+rng.IntN(hi-lo+1)) * time.Minute }
	n := 1 + rng.IntN(30)
	var items []item
	for i := range n {
		it := item{name: fmt.Sprintf("item-%02d", i)}
		if rng.IntN(4) > 0 {
			it.lastSuccess = ago(minutes(0, 180))
		}
		if rng.IntN(3) > 0 {
			it.run = time.Duration(1+rng.IntN(20*60)) * time.Second
		}
		items = append(items, it)
	}
	g := group(items...)
	g.Spec.Frequency = v1alpha1.Duration(fmt.Sprintf("%dm", 5+rng.IntN(120)))
	if rng.IntN(2) == 0 {
		g.Spec.FailureCoolOff = v1alpha1.Duration(fmt.Sprintf("%dm", 1+rng.IntN(60)))
		if rng.IntN(2) == 0 {
			g.Spec.Backoff = &v1alpha1.Backoff{Policy: v1alpha1.BackoffExponential, MaxCoolOff: "3h"}
		}
	}
	for i := range g.Status.Items {
		it := &g.Status.Items[i]
		switch rng.IntN(6) {
		case 0:
			it.LastFailure = stampAt(-minutes(0, 120))
			it.FailureCount = int32(1 + rng.IntN(8))
		case 1:
			it.LastFailure, it.FailureCount, it.ParkedGeneration = stampAt(-minutes(0, 120)), 3, g.Generation
			g.Spec.MaxConsecutiveFailures = 3
		}
	}
	if rng.IntN(4) == 0 {
		g.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{ConsecutiveItemFailures: 3}
		g.Status.CircuitBreaker = &v1alpha1.CircuitBreakerStatus{State: v1alpha1.BreakerClosed, ClosedAt: stampAt(-minutes(0, 120))}
	}
	switch rng.IntN(5) {
	case 0:
		g.Spec.RunTimeout = v1alpha1.Duration(fmt.Sprintf("%dm", 1+rng.IntN(40)))
	case 1:
		g.Spec.LearnedRunTimeout = &v1alpha1.LearnedRunTimeout{
			Factor: int32(2 + rng.IntN(3)), Min: "1m", Max: v1alpha1.Duration(fmt.Sprintf("%dm", 1+rng.IntN(60))),
		}
	}
	in := input(g)
	if rng.IntN(3) == 0 {
		if it := g.Status.Items[rng.IntN(n)]; it.ParkedGeneration == 0 {
			running := it.Name
			g.Status.RunCount = 3
			start := -minutes(0, 15)
			g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: running, PodName: podbuild.Name("backups", running, 3), StartedAt: *stampAt(start)}
			pod := runningPod(g, running, 3, start)
			if late := time.Duration(rng.Int64N(int64(-start/time.Second)+1)) * time.Second; rng.IntN(3) == 0 {
				pod.CreationTimestamp = *stampAt(start + late) // made late, maybe after its expected end
			}
			in.Pods = []corev1.Pod{pod}
		}
	}
	opts := Options{Horizon: minutes(30, 24*60), MaxPasses: 4*n + 64, DefaultRun: DefaultRun, UntilAssessed: rng.IntN(2) == 0}
	if rng.IntN(5) == 0 {
		opts.MaxPasses = 1 + rng.IntN(2*n)
	}
	return in, opts
}
