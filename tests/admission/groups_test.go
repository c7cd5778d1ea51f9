package admission

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/internal/duration"
)

// testGroups sends whole groups, valid and invalid, and checks the refusals' messages: each says
// which field and why, and stays short.
func testGroups(t *testing.T, c client.Client) {
	t.Helper()
	window := func(zone string) []any {
		return []any{map[string]any{"start": "22:00", "end": "02:00", "timeZone": zone}}
	}
	tests := []struct {
		name string
		spec map[string]any
		// messages are in the refusal, in order; none for a valid group.
		messages []string
	}{
		{name: "a schedule in a zone, a window in another", spec: map[string]any{
			"schedule": "*/15 2-4 1,15 Jan-Jun Mon-Fri", "scheduleTimeZone": "Europe/Berlin", "blackoutWindows": window("America/New_York"),
		}},
		{name: "February 29", spec: map[string]any{"schedule": "0 0 29 feb *", "scheduleTimeZone": "Etc/GMT+5"}},
		{name: "a step larger than the field", spec: map[string]any{"schedule": "*/100 0 * * *"}},
		{name: "minute 61", spec: map[string]any{"schedule": "61 * * * *"}, messages: []string{
			// 1.30 writes Invalid value: "string", later versions the value.
			`spec.schedule: Invalid value: `, `schedule "61 * * * *": the minute field "61" is not valid: use numbers 0-59`,
		}},
		{name: "hour 24", spec: map[string]any{"schedule": "0 24 * * *"}, messages: []string{`the hour field "24" is not valid: use numbers 0-23`}},
		{name: "day 0", spec: map[string]any{"schedule": "0 0 0 * *"}, messages: []string{`the day-of-month field "0" is not valid: use numbers 1-31`}},
		{name: "a reversed range of months", spec: map[string]any{"schedule": "0 0 1 dec-jan *"}, messages: []string{
			`the month field "dec-jan" is not valid: use numbers 1-12 or JAN-DEC, * or ?, ranges a-b with a <= b`,
		}},
		{name: "weekday 7", spec: map[string]any{"schedule": "0 0 * * 7"}, messages: []string{`the day-of-week field "7" is not valid: use numbers 0-6 (Sunday is 0, 7 is refused)`}},
		{name: "a step of 0", spec: map[string]any{"schedule": "*/0 * * * *"}, messages: []string{`the minute field "*/0" is not valid`}},
		{name: "two bad fields", spec: map[string]any{"schedule": "60 24 * * *"}, messages: []string{`the minute field "60"`, `the hour field "24"`}},
		{name: "February 30", spec: map[string]any{"schedule": "0 0 30 2 *"}, messages: []string{`schedule "0 0 30 2 *" matches no date`}},
		{name: "a time zone prefix", spec: map[string]any{"schedule": "CRON_TZ=UTC 0 0 * * *"}, messages: []string{
			`"CRON_TZ=UTC 0 0 * * *" is not a cron schedule`, "the time zone goes in spec.scheduleTimeZone",
		}},
		{name: "an unknown schedule zone", spec: map[string]any{"schedule": "@daily", "scheduleTimeZone": "Mars/Olympus"}, messages: []string{
			`spec.scheduleTimeZone: Invalid value: `, `unknown time zone "Mars/Olympus": use an IANA name such as Europe/Berlin`,
		}},
		{name: "park after 1 failure", spec: map[string]any{"maxConsecutiveFailures": 1}},
		{name: "park after 0 failures", spec: map[string]any{"maxConsecutiveFailures": 0}, messages: []string{
			`spec.maxConsecutiveFailures: Invalid value: 0: spec.maxConsecutiveFailures in body should be greater than or equal to 1`,
		}},
		{name: "park after 1001 failures", spec: map[string]any{"maxConsecutiveFailures": 1001}, messages: []string{
			`spec.maxConsecutiveFailures: Invalid value: 1001: spec.maxConsecutiveFailures in body should be less than or equal to 1000`,
		}},
		{name: "a learned run timeout", spec: map[string]any{"learnedRunTimeout": map[string]any{"factor": 2, "min": "5m", "max": "6h"}}},
		{name: "a learned run timeout with its defaults", spec: map[string]any{"learnedRunTimeout": map[string]any{"max": "1m"}}},
		{name: "a learned and a fixed run timeout", spec: map[string]any{"runTimeout": "1h", "learnedRunTimeout": map[string]any{"max": "6h"}}, messages: []string{
			"spec.runTimeout and spec.learnedRunTimeout cannot both be set",
		}},
		{name: "a learned run timeout without max", spec: map[string]any{"learnedRunTimeout": map[string]any{"factor": 3}}, messages: []string{
			`spec.learnedRunTimeout.max: Required value`,
		}},
		{name: "a learned run timeout whose min is over its max", spec: map[string]any{"learnedRunTimeout": map[string]any{"min": "2h", "max": "1h"}}, messages: []string{
			`learnedRunTimeout.min "2h" is longer than max "1h"`,
		}},
		{name: "a learned run timeout whose default min is over its max", spec: map[string]any{"learnedRunTimeout": map[string]any{"max": "30s"}}, messages: []string{
			`learnedRunTimeout.min "1m" is longer than max "30s"`,
		}},
		{name: "a learned factor of 1", spec: map[string]any{"learnedRunTimeout": map[string]any{"factor": 1, "max": "1h"}}, messages: []string{
			`spec.learnedRunTimeout.factor: Invalid value: 1: spec.learnedRunTimeout.factor in body should be greater than or equal to 2`,
		}},
		{name: "a window in Local", spec: map[string]any{"blackoutWindows": window("Local")}, messages: []string{
			`spec.blackoutWindows[0].timeZone: Invalid value: `, `unknown time zone "Local"`,
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expectAnswer(t, dryRun(t.Context(), c, group(fmt.Sprintf("group-%d", i), tt.spec)), tt.messages)
		})
	}
}

// expectAnswer checks the API server's answer to a dry-run create: admitted when no messages are
// wanted, else a refusal saying each of them, in at most 1200 characters.
func expectAnswer(t *testing.T, err error, messages []string) {
	t.Helper()
	admitted, other := answer(err)
	switch {
	case other != nil:
		t.Fatal(other)
	case len(messages) == 0:
		if !admitted {
			t.Fatalf("refused: %v", err)
		}
		return
	case admitted:
		t.Fatalf("accepted; want a refusal with %q", messages)
	}
	t.Logf("refused: %v", err)
	for _, m := range messages {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("the refusal does not say %q: %v", m, err)
		}
	}
	if len(err.Error()) > 1200 {
		t.Errorf("the refusal is %d characters long", len(err.Error()))
	}
}

// testDurations sends durations around the largest time.Duration as spec.frequency to the API
// server and to the operator's parser (internal/duration.Parse): both must accept or both refuse.
func testDurations(t *testing.T, c client.Client) {
	t.Helper()
	for i, d := range []string{
		"1h", "9223372036s", "9223372037s", "15250w", "15251w", "153722867m", "153722868m", "2562047h", "2562048h",
		"106751d", "106752d", "00000000000000000001s", "99999999999999999999999s", "1h 9223372032s", "1h 9223372033s",
		"9999999999w", "5x", "0s",
	} {
		err := dryRun(t.Context(), c, group(fmt.Sprintf("duration-%d", i), map[string]any{"frequency": d}))
		admitted, other := answer(err)
		if other != nil {
			t.Fatalf("frequency %q: %v", d, other)
		}
		_, parseErr := duration.Parse(d)
		if admitted != (parseErr == nil) {
			t.Errorf("frequency %q: admission accepted=%v (%v), the operator's parser accepted=%v (%v)", d, admitted, err, parseErr == nil, parseErr)
		}
	}
}
