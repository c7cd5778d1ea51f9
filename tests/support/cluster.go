package support

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Cluster is a suite's own instance of the local cluster of hack/cluster/cluster.sh, in a state
// directory that no one else uses.
type Cluster struct {
	// Script is the path of cluster.sh.
	Script string
	// StateDir is the cluster's state directory (OAAT_CLUSTER_DIR): its pid files, logs, data.
	StateDir string
	// Progress receives cluster.sh's standard error, its progress; nil discards it.
	Progress io.Writer
}

// NewCluster returns the cluster of the repository at repoRoot whose state is in
// .state/<name>, with cluster.sh's progress written to progress.
func NewCluster(repoRoot, name string, progress io.Writer) *Cluster {
	return &Cluster{
		Script:   filepath.Join(repoRoot, "hack", "cluster", "cluster.sh"),
		StateDir: filepath.Join(repoRoot, ".state", name),
		Progress: progress,
	}
}

// Run runs cluster.sh with the arguments and returns its standard output; its error carries the
// script's standard error.
func (c *Cluster) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.Script, args...)
	cmd.Env = append(os.Environ(), "OAAT_CLUSTER_DIR="+c.StateDir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if c.Progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, c.Progress)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("cluster.sh %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// Up starts the cluster and returns the path of its admin kubeconfig, the last word cluster.sh
// up prints.
func (c *Cluster) Up(ctx context.Context) (string, error) {
	out, err := c.Run(ctx, "up")
	if err != nil {
		return "", err
	}
	fields := strings.Fields(out)
	if len(fields) == 0 {
		return "", errors.New("cluster.sh up printed no kubeconfig path")
	}
	return fields[len(fields)-1], nil
}

// Purge stops whatever an earlier run left running and deletes the cluster's state, so that the
// next Up starts an empty cluster.
func (c *Cluster) Purge(ctx context.Context) error {
	_, err := c.Run(ctx, "down", "--purge")
	return err
}

// downTimeout bounds Down.
const downTimeout = 2 * time.Minute

// Down stops the cluster and keeps its state (logs, etcd data): the next Up starts warm, and the
// state can be looked at after the run. It takes no context, so that it runs even after the
// suite's timed out; it gives cluster.sh two minutes.
func (c *Cluster) Down() error {
	ctx, cancel := context.WithTimeout(context.Background(), downTimeout)
	defer cancel()
	_, err := c.Run(ctx, "down")
	return err
}

// PIDs returns the pid of each component that cluster.sh recorded (pids/<component>.pid in the
// state directory), by component. Unreadable files are left out.
func (c *Cluster) PIDs() map[string]int {
	pids := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(c.StateDir, "pids", "*.pid"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return pids
}
