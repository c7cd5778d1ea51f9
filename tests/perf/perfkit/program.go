package perfkit

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// Program is what the benchmark and the chaos run share around their own work: the settings, a
// cluster of their own, the report and the exit code.
type Program struct {
	// Name is the program's name: its cluster is in .state/perf-<name>, its section of the
	// document is <name>, <NAME>_DOC overrides the document's path (docs/performance.md).
	Name string
	// Section names the program's section of the document instead of Name, for a run that
	// measures part of what a full run does and must not replace the full run's report.
	Section string
	// Knobs are the settings read; malformed ones stop the program before it starts anything.
	Knobs *Knobs
	// Nodes is the number of fake Nodes of the cluster.
	Nodes int
	// Report is printed as it is made and written to the document at the end.
	Report *Report
	// Run does the program's work on the started cluster and returns the broken invariants.
	Run func(ctx context.Context, env *Env) (violations []string, err error)
}

// Main runs the program and exits: 0 when it ran and found no broken invariant, 1 when it found
// some, 2 when it could not run. Ctrl-C or SIGTERM stops it, and its cluster.
func (p Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := p.run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", p.Name, err)
	}
	os.Exit(code)
}

func (p Program) run(ctx context.Context) (int, error) {
	if err := p.Knobs.Err(); err != nil {
		return 2, err
	}
	root, err := RepoRoot()
	if err != nil {
		return 2, err
	}
	doc := os.Getenv(strings.ToUpper(p.Name) + "_DOC")
	if doc == "" {
		doc = filepath.Join(root, "docs", "performance.md")
	}
	p.Report.Printf("revision: %s; manager: %s; GOMEMLIMIT: %s", Revision(root), inClone(root, os.Getenv("MANAGER")),
		cmp.Or(os.Getenv("MANAGER_GOMEMLIMIT"), "none (MANAGER_GOMEMLIMIT)"))
	env, err := StartCluster(ctx, root, "perf-"+p.Name, p.Nodes, os.Stderr)
	if err != nil {
		return 2, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping the cluster: %v\n", p.Name, err)
		}
	}()
	violations, err := p.Run(ctx, env)
	if err != nil {
		return 2, err
	}
	section := p.Section
	if section == "" {
		section = p.Name
	}
	if err := p.Report.WriteSection(doc, section); err != nil {
		return 2, err
	}
	fmt.Fprintf(os.Stderr, "%s: report written to %s\n", p.Name, doc)
	if len(violations) > 0 {
		return 1, fmt.Errorf("%d broken invariants:\n  %s", len(violations), strings.Join(violations, "\n  "))
	}
	return 0, nil
}

// inClone names a path of the clone relative to it, so that a published report carries no path of
// the machine it ran on (a temporary clone's); a path elsewhere is kept.
func inClone(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
