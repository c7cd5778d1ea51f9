//go:build olm

package olm

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
	registry := startRegistry(t)

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

// startRegistry starts Debian's docker-registry (distribution) on a free loopback port, its
// storage in a temporary directory, and returns its host:port once it answers; it is stopped when
// the test ends.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Fatalf("Debian's docker-registry is not installed: make test-olm installs it (make image-packages): %v", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	if err := listener.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	config := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			if raw, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("docker-registry log:\n%s", raw)
			}
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not answer on %s within 30 s (last: %v)", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
