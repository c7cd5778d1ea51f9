package support

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// StartRegistry starts Debian's docker-registry (distribution) on a free loopback port, its
// storage in a temporary directory, and returns its host:port once it answers; it is stopped when
// the test ends.
func StartRegistry(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		tb.Fatalf("Debian's docker-registry is not installed: make image-packages installs it: %v", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := listener.Addr().String()
	if err := listener.Close(); err != nil {
		tb.Fatal(err)
	}

	dir := tb.TempDir()
	config := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(config), 0o644); err != nil {
		tb.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if tb.Failed() {
			if raw, err := os.ReadFile(logFile.Name()); err == nil {
				tb.Logf("docker-registry log:\n%s", raw)
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
			tb.Fatalf("docker-registry did not answer on %s within 30 s (last: %v)", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
