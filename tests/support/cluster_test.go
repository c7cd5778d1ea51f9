package support

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// scriptCluster returns a Cluster whose script is a shell script with the body, and its progress.
func scriptCluster(t *testing.T, body string) (*Cluster, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	c := NewCluster(root, "test-cluster", nil)
	if err := os.MkdirAll(filepath.Dir(c.Script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Script, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	c.Progress = &progress
	return c, &progress
}

func TestNewCluster(t *testing.T) {
	c := NewCluster("/repo", "e2e-cluster", nil)
	if c.Script != "/repo/hack/cluster/cluster.sh" || c.StateDir != "/repo/.state/e2e-cluster" {
		t.Errorf("NewCluster = %+v", c)
	}
}

func TestClusterRun(t *testing.T) {
	c, progress := scriptCluster(t, `echo "args: $*"; echo "dir: $OAAT_CLUSTER_DIR"; echo progress >&2`)
	out, err := c.Run(context.Background(), "down", "--purge")
	if err != nil {
		t.Fatal(err)
	}
	if want := "args: down --purge\ndir: " + c.StateDir + "\n"; out != want {
		t.Errorf("Run output = %q, want %q", out, want)
	}
	if progress.String() != "progress\n" {
		t.Errorf("progress = %q", progress.String())
	}
	if err := c.Purge(context.Background()); err != nil {
		t.Errorf("Purge: %v", err)
	}
	if err := c.Down(); err != nil {
		t.Errorf("Down: %v", err)
	}
}

func TestClusterRunFails(t *testing.T) {
	c, _ := scriptCluster(t, `echo "no etcd" >&2; exit 3`)
	_, err := c.Run(context.Background(), "up")
	if err == nil || !strings.Contains(err.Error(), "cluster.sh up") || !strings.Contains(err.Error(), "no etcd") {
		t.Errorf("Run error = %v, want the arguments and the standard error", err)
	}
	if _, err := c.Up(context.Background()); err == nil {
		t.Error("Up of a failing script: no error")
	}
}

func TestClusterUp(t *testing.T) {
	c, _ := scriptCluster(t, `echo "ready"; echo "/state/admin.kubeconfig"`)
	path, err := c.Up(context.Background())
	if err != nil || path != "/state/admin.kubeconfig" {
		t.Errorf("Up = %q, %v; want the last word of the output", path, err)
	}
	c, _ = scriptCluster(t, `true`)
	if _, err := c.Up(context.Background()); err == nil || !strings.Contains(err.Error(), "no kubeconfig path") {
		t.Errorf("Up with no output: error %v", err)
	}
}

func TestClusterPIDs(t *testing.T) {
	c, _ := scriptCluster(t, `true`)
	if got := c.PIDs(); len(got) != 0 {
		t.Errorf("PIDs without a state directory = %v", got)
	}
	dir := filepath.Join(c.StateDir, "pids")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"etcd.pid": "123\n", "kwok.pid": "456", "bad.pid": "x", "notes.txt": "789"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := c.PIDs(), map[string]int{"etcd": 123, "kwok": 456}; !reflect.DeepEqual(got, want) {
		t.Errorf("PIDs = %v, want %v", got, want)
	}
}
