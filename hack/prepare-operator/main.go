// Command prepare-operator readies a cluster for running the manager outside it as its
// ServiceAccount: it applies config/local, waits for the CRDs, and writes a kubeconfig with a
// token of the operator's ServiceAccount (support.LocalOperator.Prepare). hack/local-operator.sh
// runs it; the Go suites and programs call support.LocalOperator themselves.
//
// Usage: prepare-operator -admin-kubeconfig FILE -kubeconfig FILE [-ttl 24h] [-repo DIR]
// with KUSTOMIZE and KUBECTL, the binaries, in the environment.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/oaat-io/oaat-operator/tests/support"
)

func main() {
	admin := flag.String("admin-kubeconfig", "", "the cluster's admin kubeconfig")
	out := flag.String("kubeconfig", "", "the kubeconfig to write, with a token of the operator's ServiceAccount")
	ttl := flag.Duration("ttl", 24*time.Hour, "how long the token is valid")
	repo := flag.String("repo", ".", "the repository's root, where config/local is")
	flag.Parse()
	if err := run(*repo, *admin, *out, *ttl); err != nil {
		fmt.Fprintf(os.Stderr, "prepare-operator: %v\n", err)
		os.Exit(1)
	}
}

func run(root, admin, out string, ttl time.Duration) error {
	if admin == "" || out == "" || flag.NArg() > 0 {
		return fmt.Errorf("usage: prepare-operator -admin-kubeconfig FILE -kubeconfig FILE [-ttl DURATION] [-repo DIR]")
	}
	if err := support.RequireFiles("KUSTOMIZE", "KUBECTL"); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "config", "local", "kustomization.yaml")); err != nil {
		return fmt.Errorf("config/local not found in %s: %w", root, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return support.LocalOperator{
		Kustomize: os.Getenv("KUSTOMIZE"), Kubectl: os.Getenv("KUBECTL"), RepoRoot: root,
		AdminKubeconfig: admin, Log: os.Stderr,
	}.Prepare(ctx, out, ttl)
}
