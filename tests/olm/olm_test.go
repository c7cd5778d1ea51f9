//go:build olm

// Package olm checks the OLM packaging of the operator without a cluster: the bundle passes
// operator-sdk's validation with the operatorframework suite (no error, no warning), every
// scorecard test of bundle/tests/scorecard/config.yaml passes (the built-in basic and olm tests
// and the project's own, run as scorecard would run them in a pod: with the bundle at /bundle),
// the file-based catalog is valid and points at the bundle image, and operator-sdk's multiarch
// validator finds the operator image (bin/images, pushed into a throw-away registry) to agree
// with the CSV.
//
// It runs through `make test-olm`, which builds the tools and passes their paths: OPERATOR_SDK,
// SCORECARD_TEST (operator-sdk's scorecard-test program), OAAT_SCORECARD_TESTS (tests/scorecard),
// OPM, and the expected images BUNDLE_IMG, SCORECARD_IMG, SCORECARD_TEST_IMG and IMG. Mounting the
// bundle at /bundle takes a private mount namespace (unshare -m), hence root.
package olm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// repoRoot is the repository, from this package's directory (go test runs tests there).
const repoRoot = "../.."

// requireEnv returns the environment variable name, and fails the test when it is unset: these
// tests are run by `make test-olm`, never skipped.
func requireEnv(t *testing.T, name string) string {
	t.Helper()
	value := os.Getenv(name)
	if value == "" {
		t.Fatalf("%s is not set: run these tests with `make test-olm`, which builds the tools and sets OPERATOR_SDK, SCORECARD_TEST, OAAT_SCORECARD_TESTS, OPM, BUNDLE_IMG, SCORECARD_IMG and SCORECARD_TEST_IMG", name)
	}
	return value
}

// requireTool returns the path in the environment variable name, failing unless it is an
// executable file.
func requireTool(t *testing.T, name string) string {
	t.Helper()
	path := requireEnv(t, name)
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file (%v): run `make test-olm`", name, path, err)
	}
	return path
}

// run runs name with args in the repository root and returns its standard output; the standard
// error goes into the test log.
func run(t *testing.T, name string, args ...string) (stdout string, err error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if errOut.Len() > 0 {
		t.Logf("%s %s: stderr:\n%s", filepath.Base(name), strings.Join(args, " "), errOut.String())
	}
	return out.String(), err
}

// validationResult is operator-sdk bundle validate's json-alpha1 output.
type validationResult struct {
	Passed  bool `json:"passed"`
	Outputs []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"outputs"`
}

func TestBundleValidatesWithoutWarnings(t *testing.T) {
	operatorSDK := requireTool(t, "OPERATOR_SDK")
	out, err := run(t, operatorSDK, "bundle", "validate", "./bundle", "--select-optional", "suite=operatorframework", "-o", "json-alpha1")
	t.Logf("operator-sdk bundle validate ./bundle --select-optional suite=operatorframework:\n%s", out)
	if err != nil {
		t.Fatalf("operator-sdk bundle validate: %v", err)
	}
	var result validationResult
	if err := json.Unmarshal([]byte(out), &result); err != nil {
		t.Fatalf("Reading the validation result: %v", err)
	}
	if !result.Passed {
		t.Errorf("The bundle did not pass validation")
	}
	for _, o := range result.Outputs {
		t.Errorf("%s: %s", o.Type, o.Message)
	}
}

// scorecardConfig is what the tests read of bundle/tests/scorecard/config.yaml.
type scorecardConfig struct {
	Stages []struct {
		Tests []struct {
			Image      string            `json:"image"`
			Entrypoint []string          `json:"entrypoint"`
			Labels     map[string]string `json:"labels"`
		} `json:"tests"`
	} `json:"stages"`
}

// testStatus is a scorecard v1alpha3 TestStatus, as the test programs print it.
type testStatus struct {
	Results []struct {
		Name        string   `json:"name"`
		Log         string   `json:"log"`
		State       string   `json:"state"`
		Errors      []string `json:"errors"`
		Suggestions []string `json:"suggestions"`
	} `json:"results"`
}

// The tests the scorecard configuration must hold, by program.
var (
	builtinTests = []string{
		"basic-check-spec",
		"olm-bundle-validation",
		"olm-crds-have-validation",
		"olm-crds-have-resources",
		"olm-spec-descriptors",
		"olm-status-descriptors",
	}
	customTests = []string{
		"oaat-alm-examples-valid",
		"oaat-descriptors-complete",
		"oaat-install-modes-wired",
	}
)

// TestScorecard runs every test of the bundle's scorecard configuration as scorecard runs it in
// a pod: the test image's program with the test name, and the bundle at /bundle. Here /bundle is
// a bind mount in a private mount namespace, so nothing outside the test sees it.
func TestScorecard(t *testing.T) {
	programs := map[string]string{
		"scorecard-test":       requireTool(t, "SCORECARD_TEST"),
		"oaat-scorecard-tests": requireTool(t, "OAAT_SCORECARD_TESTS"),
	}
	images := map[string]string{
		"scorecard-test":       requireEnv(t, "SCORECARD_TEST_IMG"),
		"oaat-scorecard-tests": requireEnv(t, "SCORECARD_IMG"),
	}
	if os.Geteuid() != 0 {
		t.Fatalf("The scorecard tests read the bundle at /bundle, which these tests bind-mount in a private mount namespace (unshare -m): that needs root. Run `make test-olm` as root (CI does).")
	}
	bundleDir, err := filepath.Abs(filepath.Join(repoRoot, "bundle"))
	if err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(filepath.Join(bundleDir, "tests", "scorecard", "config.yaml"))
	if err != nil {
		t.Fatalf("Reading the scorecard configuration: %v", err)
	}
	var config scorecardConfig
	if err := yaml.Unmarshal(raw, &config); err != nil {
		t.Fatalf("Reading the scorecard configuration: %v", err)
	}

	byProgram := map[string][]string{}
	for _, stage := range config.Stages {
		for _, test := range stage.Tests {
			if len(test.Entrypoint) != 2 {
				t.Errorf("Scorecard test %v: the entrypoint should be a program and a test name", test.Entrypoint)
				continue
			}
			program, name := test.Entrypoint[0], test.Entrypoint[1]
			bin, known := programs[program]
			if !known {
				t.Errorf("Scorecard test %s: no local build of its program %q", name, program)
				continue
			}
			if test.Image != images[program] {
				t.Errorf("Scorecard test %s: image %q, want %q (the image of %s that the Makefile builds)", name, test.Image, images[program], program)
			}
			byProgram[program] = append(byProgram[program], name)
			t.Run(name, func(t *testing.T) { runScorecardTest(t, bundleDir, bin, name) })
		}
	}
	for program, want := range map[string][]string{"scorecard-test": builtinTests, "oaat-scorecard-tests": customTests} {
		got := append([]string(nil), byProgram[program]...)
		sort.Strings(got)
		want = append([]string(nil), want...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("The scorecard configuration runs %s tests %v, want %v", program, got, want)
		}
	}
}

func runScorecardTest(t *testing.T, bundleDir, bin, name string) {
	t.Helper()
	const script = `mkdir -p /bundle && mount --bind "$1" /bundle && exec "$2" "$3"`
	out, err := run(t, "unshare", "-m", "sh", "-c", script, "sh", bundleDir, bin, name)
	if err != nil {
		t.Fatalf("unshare -m ... %s %s: %v\n%s", filepath.Base(bin), name, err, out)
	}
	var status testStatus
	if err := json.Unmarshal([]byte(out), &status); err != nil {
		t.Fatalf("The output of %s %s is not a TestStatus: %v\n%s", filepath.Base(bin), name, err, out)
	}
	if len(status.Results) == 0 {
		t.Fatalf("%s %s gave no result:\n%s", filepath.Base(bin), name, out)
	}
	for _, r := range status.Results {
		t.Logf("%s: %s", r.Name, r.State)
		for _, s := range r.Suggestions {
			t.Logf("  suggestion: %s", s)
		}
		if r.State != "pass" {
			t.Errorf("%s: state %q, errors:\n%s\nlog:\n%s", r.Name, r.State, strings.Join(r.Errors, "\n"), r.Log)
		}
	}
}

// catalogEntry is what the test reads of the catalog's olm.bundle and olm.channel entries.
type catalogEntry struct {
	Schema        string `json:"schema"`
	Name          string `json:"name"`
	Image         string `json:"image"`
	RelatedImages []struct {
		Image string `json:"image"`
	} `json:"relatedImages"`
	Entries []struct {
		Name      string `json:"name"`
		Replaces  string `json:"replaces"`
		SkipRange string `json:"skipRange"`
	} `json:"entries"`
}

// TestCatalog checks that the catalog holds this release's bundle under BUNDLE_IMG and the
// release it replaces (the CSV's spec.replaces), and that its channel upgrades from that one as
// the CSV says (replaces, olm.skipRange).
func TestCatalog(t *testing.T) {
	opm := requireTool(t, "OPM")
	bundleImage := requireEnv(t, "BUNDLE_IMG")
	if out, err := run(t, opm, "validate", "catalog"); err != nil {
		t.Fatalf("opm validate catalog: %v\n%s", err, out)
	}

	out, err := run(t, opm, "render", "catalog", "-o", "json")
	if err != nil {
		t.Fatalf("opm render catalog: %v", err)
	}
	bundles := map[string]catalogEntry{}
	var channels []catalogEntry
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e catalogEntry
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("Reading the rendered catalog: %v", err)
		}
		switch e.Schema {
		case "olm.bundle":
			bundles[e.Name] = e
		case "olm.channel":
			channels = append(channels, e)
		}
	}
	csv := bundleCSV(t)
	csvName, _ := csv["metadata"].(map[string]any)["name"].(string)
	replaces, _ := csv["spec"].(map[string]any)["replaces"].(string)
	skipRange, _ := csv["metadata"].(map[string]any)["annotations"].(map[string]any)["olm.skipRange"].(string)
	if len(bundles) != 2 || bundles[csvName].Name == "" || bundles[replaces].Name == "" {
		t.Fatalf("The catalog should hold two bundles, %s and the one it replaces, %s: %+v", csvName, replaces, bundles)
	}
	current := bundles[csvName]
	if current.Image != bundleImage {
		t.Errorf("The catalog's bundle image is %q, want BUNDLE_IMG %q: run `make catalog`", current.Image, bundleImage)
	}
	related := false
	for _, r := range current.RelatedImages {
		related = related || r.Image == bundleImage
	}
	if !related {
		t.Errorf("The bundle image %s is not among the catalog bundle's relatedImages", bundleImage)
	}
	if len(channels) == 0 {
		t.Fatal("The catalog has no channel")
	}
	for _, ch := range channels {
		found := false
		for _, e := range ch.Entries {
			if e.Name == csvName {
				found = true
				if e.Replaces != replaces || e.SkipRange != skipRange {
					t.Errorf("Channel %s: %s replaces %q, skipRange %q; the CSV says %q and %q", ch.Name, csvName, e.Replaces, e.SkipRange, replaces, skipRange)
				}
			}
		}
		if !found {
			t.Errorf("Channel %s has no entry %s", ch.Name, csvName)
		}
	}
}

func bundleCSV(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "bundle", "manifests", "oaat-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatalf("Reading the CSV: %v", err)
	}
	var csv map[string]any
	if err := yaml.Unmarshal(raw, &csv); err != nil {
		t.Fatalf("Reading the CSV: %v", err)
	}
	return csv
}

// TestIcon checks that the CSV's icon is config/manifests/icon.svg, the file it is made from.
func TestIcon(t *testing.T) {
	svg, err := os.ReadFile(filepath.Join(repoRoot, "config", "manifests", "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	icons, _ := bundleCSV(t)["spec"].(map[string]any)["icon"].([]any)
	if len(icons) != 1 {
		t.Fatalf("The CSV should have one icon, has %d", len(icons))
	}
	icon := icons[0].(map[string]any)
	if icon["mediatype"] != "image/svg+xml" || icon["base64data"] != base64.StdEncoding.EncodeToString(svg) {
		t.Errorf("The CSV's icon is not config/manifests/icon.svg: set spec.icon[0].base64data in config/manifests/bases/oaat-operator.clusterserviceversion.yaml to `base64 -w0 config/manifests/icon.svg`, then make bundle")
	}
}
