//go:build olm

package olm

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// TestBundleMultiarch runs operator-sdk's multiarch validator as a user of a real registry would:
// the operator image that `make images` built (a manifest list, bin/images) is pushed with
// hack/images/push.sh into a throw-away Debian docker-registry on a free loopback port, and the
// validator inspects it by its public name (IMG) with podman, through a mirror to that registry
// (hack/images/validate-multiarch.sh). No warning and no error are allowed: the CSV's
// operatorframework.io/arch.* and os.* labels, the image's platforms and the Deployment's node
// affinity must all agree, and an image that cannot be inspected is a warning too.
func TestBundleMultiarch(t *testing.T) {
	operatorSDK := requireTool(t, "OPERATOR_SDK")
	image := requireEnv(t, "IMG")
	registry := support.StartRegistry(t)

	if out, err := run(t, "hack/images/push.sh", registry, image); err != nil {
		t.Fatalf("push.sh %s %s: %v\n%s", registry, image, err, out)
	}

	cmd := exec.Command("hack/images/validate-multiarch.sh", registry, "-o", "json-alpha1")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "OPERATOR_SDK="+operatorSDK)
	out, err := cmd.Output()
	t.Logf("operator-sdk bundle validate ./bundle --select-optional name=multiarch (podman, images from %s):\n%s", registry, out)
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Logf("stderr:\n%s", exitErr.Stderr)
		}
		t.Fatalf("validate-multiarch.sh: %v", err)
	}
	var result validationResult
	if err := json.Unmarshal(out, &result); err != nil {
		t.Fatalf("Reading the validation result: %v", err)
	}
	if !result.Passed {
		t.Errorf("The bundle did not pass the multiarch validation")
	}
	for _, o := range result.Outputs {
		t.Errorf("%s: %s", o.Type, o.Message)
	}
}
