package perfkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Knobs reads the programs' settings from the environment, remembering the first malformed one.
type Knobs struct {
	err  error
	used []string
}

// Int returns the integer in the environment variable name, def when it is unset.
func (k *Knobs) Int(name string, def int) int {
	v, ok := k.lookup(name, strconv.Itoa(def))
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		k.fail(fmt.Errorf("%s=%q: want a non-negative integer", name, v))
		return def
	}
	return n
}

// Duration returns the Go duration in the environment variable name, def when it is unset.
func (k *Knobs) Duration(name string, def time.Duration) time.Duration {
	v, ok := k.lookup(name, def.String())
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		k.fail(fmt.Errorf("%s=%q: want a non-negative Go duration such as 90s", name, v))
		return def
	}
	return d
}

// Names returns the comma-separated names in the environment variable name, each of which must
// be one of allowed, as a set; unset or empty means all of allowed.
func (k *Knobs) Names(name string, allowed []string) map[string]bool {
	set := map[string]bool{}
	v, ok := k.lookup(name, strings.Join(allowed, ","))
	if !ok {
		for _, a := range allowed {
			set[a] = true
		}
		return set
	}
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(allowed, n) {
			k.fail(fmt.Errorf("%s=%q: %q is none of %s", name, v, n, strings.Join(allowed, ", ")))
			continue
		}
		set[n] = true
	}
	return set
}

// Ints returns the comma-separated integers in the environment variable name, def when it is
// unset; "0" or "none" gives none.
func (k *Knobs) Ints(name string, def []int) []int {
	strs := make([]string, len(def))
	for i, n := range def {
		strs[i] = strconv.Itoa(n)
	}
	v, ok := k.lookup(name, strings.Join(strs, ","))
	if !ok {
		return def
	}
	if v == "0" || v == "none" {
		return nil
	}
	var ns []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			k.fail(fmt.Errorf("%s=%q: want positive integers separated by commas", name, v))
			return def
		}
		ns = append(ns, n)
	}
	return ns
}

func (k *Knobs) lookup(name, def string) (string, bool) {
	v, ok := os.LookupEnv(name)
	if !ok || v == "" {
		k.used = append(k.used, name+"="+def)
		return "", false
	}
	k.used = append(k.used, name+"="+v)
	return v, true
}

func (k *Knobs) fail(err error) {
	if k.err == nil {
		k.err = err
	}
}

// Err returns the first malformed setting, nil when all were well formed.
func (k *Knobs) Err() error { return k.err }

// String lists every setting read, as NAME=value, in the order read.
func (k *Knobs) String() string { return strings.Join(k.used, " ") }

// Revision describes the repository's checkout at root (git describe --always --dirty), for the
// reports; "unknown" outside git.
func Revision(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// RepoRoot returns the directory of the repository's go.mod, found from the working directory
// upwards: make runs the programs from the root, go run from anywhere inside.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/oaat-io/oaat-operator\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the oaat-operator repository")
		}
		dir = parent
	}
}
