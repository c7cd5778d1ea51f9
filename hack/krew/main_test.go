package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeArchive writes a tar.gz archive holding one file.
func writeArchive(t *testing.T, file, name string, mode int64) {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	w := tar.NewWriter(gz)
	content := []byte("#!/bin/sh\n")
	if err := w.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// makefilePlatforms are the platforms `make krew-manifest` builds (KREW_PLATFORMS).
func makefilePlatforms(t *testing.T) []string {
	t.Helper()
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KREW_PLATFORMS \?= (.+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no KREW_PLATFORMS")
	}
	return strings.Fields(string(m[1]))
}

// archives writes an archive holding the binary for each platform into a directory.
func archives(t *testing.T, version string, platforms []string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range platforms {
		writeArchive(t, filepath.Join(dir, archiveName(version, p)), binary, 0o755)
	}
	return dir
}

// The template hack/krew/oaat.yaml, filled for the platforms the Makefile builds, is a krew
// manifest with a platform per archive: its selector, URI, sha256 and bin.
func TestManifest(t *testing.T) {
	tmpl, err := os.ReadFile("oaat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	platforms := makefilePlatforms(t)
	for _, want := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"} {
		if !strings.Contains(" "+strings.Join(platforms, " ")+" ", " "+want+" ") {
			t.Errorf("KREW_PLATFORMS %v lacks %s", platforms, want)
		}
	}
	o := options{version: "1.2.3", url: "https://example.com/releases/v1.2.3/", platforms: platforms}
	o.dir = archives(t, o.version, platforms)
	out, err := fill(tmpl, o)
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, want := range []string{
		"# The krew manifest of the kubectl oaat plugin v1.2.3, written by `make krew-manifest`\n# (hack/krew) from hack/krew/oaat.yaml.\napiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\n",
		"  version: 'v1.2.3'\n",
		"        os: darwin\n        arch: arm64\n    uri: 'https://example.com/releases/v1.2.3/kubectl-oaat_v1.2.3_darwin_arm64.tar.gz'\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, text)
		}
	}
	sum, err := archiveSum(filepath.Join(o.dir, archiveName(o.version, "linux/arm64")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "        arch: arm64\n    uri: 'https://example.com/releases/v1.2.3/kubectl-oaat_v1.2.3_linux_arm64.tar.gz'\n    sha256: '"+sum+"'\n    bin: kubectl-oaat\n") {
		t.Errorf("the linux/arm64 platform lacks its archive's sha256 %s:\n%s", sum, text)
	}
	if strings.Contains(text, "{{") || strings.Contains(text, "a template") {
		t.Errorf("the manifest keeps the template's placeholders or comment:\n%s", text)
	}
}

// What makes a manifest wrong is refused before it is written.
func TestManifestRefused(t *testing.T) {
	tmpl, err := os.ReadFile("oaat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	platforms := makefilePlatforms(t)
	base := options{version: "1.2.3", url: "https://example.com/v1.2.3", platforms: platforms}
	for name, c := range map[string]struct {
		tmpl  string
		o     func(o *options)
		want  string
		setup func(t *testing.T, dir string)
	}{
		"an archive missing": {
			setup: func(t *testing.T, dir string) {
				t.Helper()
				if err := os.Remove(filepath.Join(dir, archiveName("1.2.3", "darwin/amd64"))); err != nil {
					t.Fatal(err)
				}
			},
			want: "kubectl-oaat_v1.2.3_darwin_amd64.tar.gz",
		},
		"an archive without the binary": {
			setup: func(t *testing.T, dir string) {
				t.Helper()
				writeArchive(t, filepath.Join(dir, archiveName("1.2.3", "linux/amd64")), "README", 0o644)
			},
			want: "holds no kubectl-oaat",
		},
		"a binary that is not executable": {
			setup: func(t *testing.T, dir string) {
				t.Helper()
				writeArchive(t, filepath.Join(dir, archiveName("1.2.3", "linux/amd64")), binary, 0o644)
			},
			want: "not an executable file",
		},
		"a platform built that the template lacks": {
			o:    func(o *options) { o.platforms = append(o.platforms, "windows/amd64") },
			want: "windows/amd64",
		},
		"a platform in the template that is not built": {
			o:    func(o *options) { o.platforms = o.platforms[1:] },
			want: "which has no archive",
		},
		"a version that is not semantic": {
			o:    func(o *options) { o.version = "1.2" },
			want: "spec.version",
		},
		"a wrong kind": {
			tmpl: strings.Replace(string(tmpl), "kind: Plugin", "kind: Plugins", 1),
			want: `kind "Plugins"`,
		},
		"a field krew does not know": {
			tmpl: strings.Replace(string(tmpl), "    bin: kubectl-oaat\n", "    bin: kubectl-oaat\n    binary: x\n", 1),
			want: "unknown field",
		},
		"another bin": {
			tmpl: strings.Replace(string(tmpl), "    bin: kubectl-oaat\n", "    bin: oaat\n", 1),
			want: `bin "oaat"`,
		},
		"a selector without arch": {
			tmpl: strings.Replace(string(tmpl), "        os: linux\n        arch: amd64\n", "        os: linux\n", 1),
			want: "selector.matchLabels",
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := base
			o.platforms = append([]string(nil), platforms...)
			if c.o != nil {
				c.o(&o)
			}
			o.dir = archives(t, o.version, o.platforms)
			if c.setup != nil {
				c.setup(t, o.dir)
			}
			text := c.tmpl
			if text == "" {
				text = string(tmpl)
			}
			_, err := fill([]byte(text), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
