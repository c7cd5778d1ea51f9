package main

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// zoneSource is where the zones come from: the zoneinfo.zip of a Go toolchain, which the manager
// embeds (cmd/main.go imports time/tzdata, whose data is that file), and the tzdata release that
// the toolchain's lib/time/update.bash names.
type zoneSource struct {
	// names are the zone names, sorted.
	names []string
	// release is the tzdata release, such as 2025c.
	release string
}

// readZones reads the zone names of the Go toolchain at goroot.
func readZones(goroot string) (zoneSource, error) {
	dir := filepath.Join(goroot, "lib", "time")
	r, err := zip.OpenReader(filepath.Join(dir, "zoneinfo.zip"))
	if err != nil {
		return zoneSource{}, err
	}
	defer func() { _ = r.Close() }()
	var src zoneSource
	for _, f := range r.File {
		if !f.FileInfo().IsDir() {
			src.names = append(src.names, f.Name)
		}
	}
	sort.Strings(src.names)
	script, err := os.ReadFile(filepath.Join(dir, "update.bash"))
	if err != nil {
		return zoneSource{}, err
	}
	m := regexp.MustCompile(`(?m)^DATA=(\S+)$`).FindSubmatch(script)
	if m == nil {
		return zoneSource{}, fmt.Errorf("%s/update.bash names no DATA= release", dir)
	}
	src.release = string(m[1])
	if len(src.names) == 0 {
		return zoneSource{}, fmt.Errorf("%s/zoneinfo.zip has no zones", dir)
	}
	return src, nil
}

// zonePattern is a regular expression that matches exactly the names, anchored: the names
// grouped by their first path element, so that it stays near the size of the list (RE2, in CEL,
// has no cost of its own beyond the pattern's length). + is written [+]: no backslash has to
// survive the marker, the YAML and the CEL string.
func zonePattern(names []string) string {
	return "^" + alternation(names) + "$"
}

func alternation(names []string) string {
	groups := map[string][]string{}
	var order []string
	for _, n := range names {
		head, rest, nested := strings.Cut(n, "/")
		key := head
		if nested {
			key += "/"
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		if nested {
			groups[key] = append(groups[key], rest)
		} else {
			groups[key] = append(groups[key], "")
		}
	}
	slices.Sort(order)
	alts := make([]string, 0, len(order))
	for _, key := range order {
		quoted := strings.ReplaceAll(key, "+", "[+]")
		if !strings.HasSuffix(key, "/") {
			alts = append(alts, quoted)
			continue
		}
		alts = append(alts, quoted+alternation(groups[key]))
	}
	return "(" + strings.Join(alts, "|") + ")"
}

// goroot is the root of the Go toolchain on the PATH, the one that runs `go run` and `go test`.
func goroot() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
