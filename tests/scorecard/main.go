// Command oaat-scorecard-tests runs one of oaat-operator's custom scorecard tests against the
// bundle that scorecard mounts at /bundle, and prints the result as a v1alpha3 TestStatus in
// JSON, as operator-sdk's scorecard-test does for the built-in tests. The test name is the only
// argument; -bundle reads another directory (for running it outside a scorecard pod).
//
// The tests check what the built-in basic and olm suites do not:
//
//   - oaat-alm-examples-valid: every alm-example is accepted by its CRD as the API server would
//     accept it: a valid name, no unknown fields, the OpenAPI schema (after defaulting), the
//     list types and the CEL rules (x-kubernetes-validations).
//   - oaat-descriptors-complete: every field of spec and status of each owned CRD has a
//     descriptor with a display name, a description and x-descriptors of the right kind (spec or
//     status); every descriptor names a field that exists.
//   - oaat-install-modes-wired: the CSV supports the four install modes, and the manager
//     container reads WATCH_NAMESPACE from the olm.targetNamespaces annotation, which is how
//     the manager learns the namespaces of the OperatorGroup.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	scapiv1alpha3 "github.com/operator-framework/api/pkg/apis/scorecard/v1alpha3"
)

// defaultBundleDir is where scorecard mounts the bundle in a test pod.
const defaultBundleDir = "/bundle"

// check is one custom test: the problems it finds in the bundle, and a log of what it looked at.
type check func(b *bundle) (problems []string, log string)

var checks = map[string]check{
	almExamplesValidTest:    checkALMExamples,
	descriptorsCompleteTest: checkDescriptors,
	installModesWiredTest:   checkInstallModes,
}

func main() {
	bundleDir := flag.String("bundle", defaultBundleDir, "the bundle directory (with manifests/ and metadata/)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "Usage: %s [-bundle DIR] TEST\nTests: %s\n", os.Args[0], strings.Join(testNames(), ", "))
		flag.PrintDefaults()
	}
	flag.Parse()

	out, err := json.MarshalIndent(run(*bundleDir, flag.Args()), "", "    ")
	if err != nil {
		fmt.Fprintf(os.Stderr, "Encoding the result: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

// run runs the test named by args against the bundle in dir. Like scorecard-test, it reports a
// wrong or missing test name as a failed result rather than exiting with an error, so that
// scorecard shows it.
func run(dir string, args []string) scapiv1alpha3.TestStatus {
	if len(args) != 1 {
		return status(scapiv1alpha3.TestResult{
			State:  scapiv1alpha3.FailState,
			Errors: []string{fmt.Sprintf("expected one test name, got %d arguments; valid tests: %s", len(args), strings.Join(testNames(), ", "))},
		})
	}
	name := args[0]
	test, ok := checks[name]
	if !ok {
		return status(scapiv1alpha3.TestResult{
			Name:   name,
			State:  scapiv1alpha3.FailState,
			Errors: []string{fmt.Sprintf("unknown test %q; valid tests: %s", name, strings.Join(testNames(), ", "))},
		})
	}
	b, err := loadBundle(dir)
	if err != nil {
		return status(scapiv1alpha3.TestResult{Name: name, State: scapiv1alpha3.ErrorState, Errors: []string{err.Error()}})
	}
	problems, log := test(b)
	result := scapiv1alpha3.TestResult{Name: name, Log: log, State: scapiv1alpha3.PassState}
	if len(problems) > 0 {
		result.State = scapiv1alpha3.FailState
		result.Errors = problems
	}
	return status(result)
}

func status(r scapiv1alpha3.TestResult) scapiv1alpha3.TestStatus {
	return scapiv1alpha3.TestStatus{Results: []scapiv1alpha3.TestResult{r}}
}

func testNames() []string {
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
