package admission

import (
	"archive/zip"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/internal/schedule"
)

// goZones are the zone names of the Go toolchain that runs the test (its lib/time/zoneinfo.zip,
// the data of time/tzdata, which the manager embeds).
func goZones(t *testing.T) []string {
	t.Helper()
	root, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	r, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(root)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var names []string
	for _, f := range r.File {
		if !f.FileInfo().IsDir() {
			names = append(names, f.Name)
		}
	}
	return names
}

// unknownZones are refused by admission and by the operator: not zones, zones misspelt or in the
// wrong case, Local (the operator's host), and paths.
var unknownZones = []string{
	"Mars/Olympus", "Local", "local", "utc", "Europe/berlin", "Europe/Berlin/", "/UTC", "Europe", "Etc/GMT+15",
	"EST5", "Europe/Berlin ", "../zoneinfo/UTC", "America/Argentina", strings.Repeat("A", 65),
}

// testTimeZones checks both zone fields: every zone of the Go toolchain is accepted (and read by
// the operator), and unknownZones are refused by both.
func testTimeZones(t *testing.T, c client.Client) {
	t.Helper()
	zones := goZones(t)
	const perGroup = 20 // spec.blackoutWindows' MaxItems
	for first := 0; first < len(zones); first += perGroup {
		batch := zones[first:min(first+perGroup, len(zones))]
		windows := make([]any, len(batch))
		for i, zone := range batch {
			windows[i] = map[string]any{"start": "01:00", "end": "02:00", "timeZone": zone}
			if _, err := schedule.ParseWindow("01:00", "02:00", nil, zone); err != nil {
				t.Errorf("the operator cannot read zone %q: %v", zone, err)
			}
		}
		spec := map[string]any{"schedule": "@daily", "scheduleTimeZone": batch[0], "blackoutWindows": windows}
		if err := dryRun(t.Context(), c, group(fmt.Sprintf("zones-%d", first), spec)); err != nil {
			t.Errorf("zones %v: refused: %v", batch, err)
		}
	}
	refused := 0
	for i, zone := range unknownZones {
		if _, err := schedule.ParseWindow("01:00", "02:00", nil, zone); err == nil {
			t.Errorf("the operator reads zone %q, which admission must then accept", zone)
		}
		for field, spec := range map[string]map[string]any{
			"spec.scheduleTimeZone":            {"schedule": "@daily", "scheduleTimeZone": zone},
			"spec.blackoutWindows[0].timeZone": {"blackoutWindows": []any{map[string]any{"start": "01:00", "end": "02:00", "timeZone": zone}}},
		} {
			err := dryRun(t.Context(), c, group(fmt.Sprintf("unknown-zone-%d", i), spec))
			admitted, other := answer(err)
			switch {
			case other != nil:
				t.Fatalf("zone %q: %v", zone, other)
			case admitted:
				t.Errorf("%s %q: accepted", field, zone)
			case !strings.Contains(err.Error(), field+": "):
				t.Errorf("%s %q: the refusal does not name the field: %v", field, zone, err)
			default:
				refused++
			}
		}
	}
	t.Logf("%d zones of %s accepted in both fields and read by the operator; %d unknown zones refused (%d refusals)",
		len(zones), runtime.Version(), len(unknownZones), refused)
}
