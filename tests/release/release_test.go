//go:build release

package release

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/tests/support"
)

// released is what one `make release` wrote.
type released struct {
	root, dist, registry, version string
	// images are images.txt's lines: the public name, the digest and the archive of each image.
	images []image
}

type image struct{ public, digest, archive string }

// TestRelease runs `make release` once, as a user would with a registry of their own (a throw-away
// Debian docker-registry), into a temporary directory, and checks what it wrote. The images come
// from bin/images when make images built them already for this tree. With RELEASE_REPRODUCE=1 it
// also checks that the release is reproducible (slow: see reproducible).
func TestRelease(t *testing.T) {
	r := released{dist: t.TempDir(), registry: support.StartRegistry(t), version: os.Getenv("VERSION")}
	if r.version == "" {
		t.Fatal("VERSION is not set: run this test with make test-release")
	}
	var err error
	if r.root, err = filepath.Abs("../.."); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// RELEASE_ALLOW_DIRTY: the test also runs in a tree being worked on.
	makeRelease(t, r.root, "DIST="+r.dist, "REGISTRY="+r.registry, "RELEASE_ALLOW_DIRTY=1")
	t.Logf("make release took %s", time.Since(start).Round(time.Second))
	r.images = readImages(t, r.dist)

	t.Run("the digests of the archives, the registry and the install files agree", r.checkDigests)
	t.Run("SHA256SUMS lists every file", r.checkSums)
	t.Run("the Helm chart lints clean and renders install.yaml", r.checkChart)
	t.Run("the krew manifest names the archives' sha256", r.checkKrew)
	t.Run("the SBOMs list the modules of the shipped binaries", r.checkSBOMs)
	t.Run("the images carry the OCI labels of the commit", r.checkLabels)
	t.Run("the signatures verify with the public key", r.checkSignatures)
	t.Run("the release notes are the CHANGELOG's section", r.checkNotes)
	t.Run("docs/install.md's verify commands pass in the release's directory", r.checkDocsVerify)
	if os.Getenv("RELEASE_REPRODUCE") == "1" {
		t.Run("a second assembly and a build in an empty Go cache give the same bytes", r.checkReproducible)
	}
}

// TestReleaseRefusesAVersionWithoutNotes runs the preflight of make release for a version that
// CHANGELOG.md has no section for.
func TestReleaseRefusesAVersionWithoutNotes(t *testing.T) {
	cmd := exec.Command("hack/release/release.sh", "preflight")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "VERSION=0.0.0-none", "RELEASE_ALLOW_DIRTY=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CHANGELOG.md has no section '## 0.0.0-none'") {
		t.Fatalf("release.sh preflight of a version without notes: %v\n%s", err, out)
	}
}

func makeRelease(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", root, "release"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make release %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func readImages(t *testing.T, dist string) []image {
	t.Helper()
	var images []image
	for _, line := range lines(t, filepath.Join(dist, "images.txt")) {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("images.txt: %q is not PUBLIC-NAME DIGEST ARCHIVE", line)
		}
		images = append(images, image{f[0], f[1], f[2]})
	}
	if len(images) != 3 {
		t.Fatalf("images.txt lists %d images, want the operator, the bundle and the catalog", len(images))
	}
	return images
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func fileSHA256(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return sha256Hex(raw)
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// ociArchive is an oci-archive read whole: its files by name.
type ociArchive map[string][]byte

func readArchive(t *testing.T, file string) ociArchive {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	a := ociArchive{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if h.Typeflag == tar.TypeReg {
			if a[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// blob returns a blob of the archive after checking that its content has its digest.
func (a ociArchive) blob(t *testing.T, digest string) []byte {
	t.Helper()
	b, ok := a["blobs/"+strings.Replace(digest, ":", "/", 1)]
	if !ok {
		t.Fatalf("no blob %s in the archive", digest)
	}
	if got := "sha256:" + sha256Hex(b); got != digest {
		t.Fatalf("the blob %s has the digest %s", digest, got)
	}
	return b
}

// descriptor is an OCI descriptor, the fields read here.
type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

// manifest is an OCI image index or manifest: the fields read here.
type manifest struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
}

func unmarshal[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// top returns the archive's one image (or manifest list) and checks its digest.
func (a ociArchive) top(t *testing.T, img image) manifest {
	t.Helper()
	index := unmarshal[manifest](t, a["index.json"])
	if len(index.Manifests) != 1 || index.Manifests[0].Digest != img.digest {
		t.Fatalf("%s: index.json names %v, want the one digest %s of images.txt", img.archive, index.Manifests, img.digest)
	}
	return unmarshal[manifest](t, a.blob(t, img.digest))
}

// images returns the image manifests of the archive's top manifest (itself, or a list's).
func (a ociArchive) images(t *testing.T, img image) map[string]manifest {
	t.Helper()
	top := a.top(t, img)
	if len(top.Manifests) == 0 {
		return map[string]manifest{"": top}
	}
	m := map[string]manifest{}
	for _, d := range top.Manifests {
		m[d.Platform.OS+"/"+d.Platform.Architecture] = unmarshal[manifest](t, a.blob(t, d.Digest))
	}
	return m
}

// file returns the content of a file (its path without the leading /) of an image's layers.
func (a ociArchive) file(t *testing.T, m manifest, path string) []byte {
	t.Helper()
	for _, l := range m.Layers {
		zr, err := gzip.NewReader(strings.NewReader(string(a.blob(t, l.Digest))))
		if err != nil {
			t.Fatalf("layer %s (%s): %v", l.Digest, l.MediaType, err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimPrefix(h.Name, "./") == path {
				b, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
	}
	t.Fatalf("no %s in the image", path)
	return nil
}

func (r released) image(t *testing.T, title string) image {
	t.Helper()
	for _, img := range r.images {
		if strings.HasSuffix(strings.Split(img.public, ":")[0], "/"+title) {
			return img
		}
	}
	t.Fatalf("images.txt has no image %s", title)
	return image{}
}

// imageRef matches the image references of the install files.
var imageRef = regexp.MustCompile(`(?m)^\s*(?:- )?image: *(\S+)\s*$`)

func (r released) checkDigests(t *testing.T) {
	for _, img := range r.images {
		a := readArchive(t, filepath.Join(r.dist, img.archive))
		top := a.top(t, img)
		raw := run(t, "skopeo", "inspect", "--raw", "--tls-verify=false", "docker://"+r.registry+"/"+img.public)
		if got := "sha256:" + sha256Hex(raw); got != img.digest {
			t.Errorf("%s in the registry has the digest %s, the archive %s", img.public, got, img.digest)
		}
		t.Logf("%s: %s (%s)", img.public, img.digest, top.MediaType)
	}
	operator := r.image(t, "oaat-operator")
	platforms := slices.Sorted(func(yield func(string) bool) {
		for p := range readArchive(t, filepath.Join(r.dist, operator.archive)).images(t, operator) {
			if !yield(p) {
				return
			}
		}
	})
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("the operator image's platforms are %v, want linux/amd64 and linux/arm64", platforms)
	}
	want := strings.Split(operator.public, ":")[0] + "@" + operator.digest
	for _, file := range []string{"install.yaml", "install-namespace.yaml"} {
		raw, err := os.ReadFile(filepath.Join(r.dist, file))
		if err != nil {
			t.Fatal(err)
		}
		refs := imageRef.FindAllStringSubmatch(string(raw), -1)
		if len(refs) == 0 {
			t.Errorf("%s names no image", file)
		}
		for _, ref := range refs {
			if ref[1] != want {
				t.Errorf("%s names the image %s, want %s", file, ref[1], want)
			}
		}
	}
}

// unsummed are the files of dist that SHA256SUMS does not list: itself, and what signing adds
// (different at each signing, so that SHA256SUMS stays the same for the same commit).
func unsummed(name string) bool {
	return name == "SHA256SUMS" || name == "SHA256SUMS.asc" || name == "signing-key.asc" || strings.HasSuffix(name, ".sig")
}

func (r released) checkSums(t *testing.T) {
	listed := map[string]string{}
	for _, line := range lines(t, filepath.Join(r.dist, "SHA256SUMS")) {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q", line)
		}
		listed[name] = sum
	}
	entries, err := os.ReadDir(r.dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if unsummed(e.Name()) {
			continue
		}
		sum, ok := listed[e.Name()]
		delete(listed, e.Name())
		if !ok {
			t.Errorf("SHA256SUMS does not list %s", e.Name())
		} else if got := fileSHA256(t, filepath.Join(r.dist, e.Name())); got != sum {
			t.Errorf("%s: SHA256SUMS says %s, the file is %s", e.Name(), sum, got)
		}
	}
	for name := range listed {
		t.Errorf("SHA256SUMS lists %s, which is not in dist", name)
	}
}

func (r released) checkKrew(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(r.dist, "oaat.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var archives []string
	for _, p := range m.Spec.Platforms {
		name := filepath.Base(p.URI)
		archives = append(archives, name)
		if got := fileSHA256(t, filepath.Join(r.dist, name)); got != p.SHA256 {
			t.Errorf("the krew manifest gives %s the sha256 %s, the file has %s", name, p.SHA256, got)
		}
	}
	slices.Sort(archives)
	var want []string
	for _, p := range []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"} {
		want = append(want, "kubectl-oaat_v"+r.version+"_"+p+".tar.gz")
	}
	if !slices.Equal(archives, want) || m.Spec.Version != "v"+r.version {
		t.Errorf("the krew manifest's version %s and archives %v, want v%s and %v", m.Spec.Version, archives, r.version, want)
	}
}

// pluginBinary returns the kubectl-oaat of a plugin archive of dist.
func pluginBinary(t *testing.T, archive string) []byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s: no kubectl-oaat (%v)", archive, err)
		}
		if h.Name == "kubectl-oaat" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// buildInfo is what `go version -m` says of a binary: its main module, its dependencies
// (path@version, replacements resolved) and its build settings.
type buildInfo struct {
	main     string
	deps     []string
	settings map[string]string
}

func goVersionM(t *testing.T, file string) buildInfo {
	t.Helper()
	info := buildInfo{settings: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(run(t, "go", "version", "-m", file))))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		switch {
		case f[0] == "mod":
			info.main = f[1]
		case f[0] == "dep":
			info.deps = append(info.deps, f[1]+"@"+f[2])
		case f[0] == "=>" && len(info.deps) > 0:
			info.deps[len(info.deps)-1] = f[1] + "@" + f[2]
		case f[0] == "build":
			k, v, _ := strings.Cut(f[1], "=")
			info.settings[k] = v
		}
	}
	slices.Sort(info.deps)
	return info
}

// hasSymbolTable says whether the ELF binary file has a symbol table (.symtab), which -s drops.
func hasSymbolTable(t *testing.T, file string) bool {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	return f.Section(".symtab") != nil
}

// sbomComponents returns the name@version of each component of a CycloneDX SBOM, and its main
// component's name.
func sbomComponents(t *testing.T, file string) (main string, components []string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		Metadata struct {
			Component struct {
				Name string `json:"name"`
			} `json:"component"`
		} `json:"metadata"`
		Components []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatal(err)
	}
	for _, c := range bom.Components {
		components = append(components, c.Name+"@"+c.Version)
	}
	slices.Sort(components)
	return bom.Metadata.Component.Name, components
}

func (r released) checkSBOMs(t *testing.T) {
	operator := r.image(t, "oaat-operator")
	a := readArchive(t, filepath.Join(r.dist, operator.archive))
	binaries := map[string]struct {
		binary      []byte
		versionArgs []string
	}{
		"oaat-operator-v" + r.version + ".manager.cdx.json": {a.file(t, a.images(t, operator)["linux/amd64"], "manager"), []string{"--version"}},
		"kubectl-oaat-v" + r.version + ".cdx.json": {
			pluginBinary(t, filepath.Join(r.dist, "kubectl-oaat_v"+r.version+"_linux_amd64.tar.gz")), []string{"version", "--client"},
		},
	}
	for sbom, b := range binaries {
		file := filepath.Join(t.TempDir(), "binary")
		if err := os.WriteFile(file, b.binary, 0o755); err != nil {
			t.Fatal(err)
		}
		info := goVersionM(t, file)
		main, components := sbomComponents(t, filepath.Join(r.dist, sbom))
		if main != info.main || len(components) == 0 || !slices.Equal(components, info.deps) {
			t.Errorf("%s: main component %s and components\n%v\ngo version -m: main module %s and dependencies\n%v",
				sbom, main, components, info.main, info.deps)
		}
		// Every shipped binary is built as RELEASE_GO_FLAGS says: -trimpath and no VCS stamp (go
		// version -m shows both, but not -ldflags, which -trimpath leaves out of the build
		// information), -s -w (no symbol table) and the version flags (the binary says its version).
		if info.settings["-trimpath"] != "true" || info.settings["vcs"] != "" {
			t.Errorf("%s: the binary's build settings %v, want -trimpath and no vcs", sbom, info.settings)
		}
		if symbols := hasSymbolTable(t, file); symbols {
			t.Errorf("%s: the binary has a symbol table: not linked with -s -w", sbom)
		}
		if out := string(run(t, file, b.versionArgs...)); !strings.Contains(out, " "+r.version+" (revision ") {
			t.Errorf("%s: the binary says %q, want its version %s and revision (VERSION_LDFLAGS)", sbom, out, r.version)
		}
		t.Logf("%s: %d components, as go version -m lists", sbom, len(components))
	}
}

func (r released) checkLabels(t *testing.T) {
	revision := strings.TrimSpace(string(run(t, "git", "-C", r.root, "rev-parse", "HEAD")))
	epoch, err := strconv.ParseInt(strings.TrimSpace(string(run(t, "git", "-C", r.root, "log", "-1", "--format=%ct"))), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(epoch, 0).UTC().Format(time.RFC3339)
	for _, img := range r.images {
		title := strings.Split(img.public[strings.LastIndex(img.public, "/")+1:], ":")[0]
		a := readArchive(t, filepath.Join(r.dist, img.archive))
		for platform, m := range a.images(t, img) {
			var config struct {
				Created string `json:"created"`
				Config  struct {
					Labels map[string]string `json:"Labels"`
				} `json:"config"`
			}
			if err := json.Unmarshal(a.blob(t, m.Config.Digest), &config); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"title": title, "version": r.version, "revision": revision, "created": created,
				"source": "https://github.com/oaat-io/oaat-operator", "url": "https://github.com/oaat-io/oaat-operator",
				"licenses": "Apache-2.0"}
			for k, v := range want {
				if got := config.Config.Labels["org.opencontainers.image."+k]; got != v {
					t.Errorf("%s %s: label org.opencontainers.image.%s is %q, want %q", img.public, platform, k, got, v)
				}
			}
			if config.Config.Labels["org.opencontainers.image.description"] == "" {
				t.Errorf("%s %s: no org.opencontainers.image.description", img.public, platform)
			}
			if config.Created != created {
				t.Errorf("%s %s: created %s, want the commit's time %s", img.public, platform, config.Created, created)
			}
		}
	}
}

func (r released) checkSignatures(t *testing.T) {
	t.Setenv("GNUPGHOME", t.TempDir())
	run(t, "gpg", "--batch", "--quiet", "--import", filepath.Join(r.dist, "signing-key.asc"))
	t.Cleanup(func() { _ = exec.Command("gpgconf", "--kill", "gpg-agent").Run() })
	colons := string(run(t, "gpg", "--with-colons", "--list-keys"))
	fingerprint := regexp.MustCompile(`(?m)^fpr:+([0-9A-F]{40}):`).FindStringSubmatch(colons)
	if fingerprint == nil {
		t.Fatalf("no fingerprint in signing-key.asc:\n%s", colons)
	}
	run(t, "gpg", "--batch", "--verify", filepath.Join(r.dist, "SHA256SUMS.asc"), filepath.Join(r.dist, "SHA256SUMS"))
	for _, img := range r.images {
		a := readArchive(t, filepath.Join(r.dist, img.archive))
		manifestFile := filepath.Join(t.TempDir(), "manifest.json")
		if err := os.WriteFile(manifestFile, a.blob(t, img.digest), 0o644); err != nil {
			t.Fatal(err)
		}
		out := run(t, "skopeo", "standalone-verify", manifestFile, img.public, fingerprint[1], filepath.Join(r.dist, img.archive+".sig"))
		if !strings.Contains(string(out), img.digest) {
			t.Errorf("skopeo standalone-verify of %s: %s", img.public, out)
		}
	}
}

// checkDocsVerify runs docs/install.md's blocks marked checked-by: tests/release verify as a user
// runs them in the release's directory (a copy of it: they write files there): the sums, the
// signatures with the public key, and the plugin's modules beside its SBOM's.
func (r released) checkDocsVerify(t *testing.T) {
	blocks, err := support.CheckedBlocks(r.root, "tests/release", "verify")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("docs/install.md has no block marked checked-by: tests/release verify")
	}
	// The page's mktemp -d makes the keyring under TMPDIR, and gpg-agent's socket goes in it: a
	// path as long as t.TempDir()'s is over a Unix socket's limit (108 bytes), so the agent would
	// not start. A user's TMPDIR is short, /tmp; so is this one.
	dir := t.TempDir()
	tmp, err := os.MkdirTemp("", "gpg") //nolint:usetesting // t.TempDir() is too long a path for the agent's socket (above)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	entries, err := os.ReadDir(r.dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(r.dist, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The page's mktemp -d keyring is made under TMPDIR; its agent is stopped at the end.
	t.Cleanup(func() {
		homes, _ := filepath.Glob(filepath.Join(tmp, "tmp.*"))
		for _, home := range homes {
			_ = exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run()
		}
	})
	var all strings.Builder
	for _, b := range blocks {
		out, err := support.RunCheckedBlock(context.Background(), dir, []string{"TMPDIR=" + tmp}, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		all.WriteString(out)
	}
	out := all.String()
	for _, want := range []string{"install.yaml: OK", "Good signature", "Signature verified",
		"\tmod\tgithub.com/oaat-io/oaat-operator\t", "sigs.k8s.io/controller-runtime v"} {
		if !strings.Contains(out, want) {
			t.Errorf("docs/install.md's verify commands printed no %q:\n%s", want, out)
		}
	}
}

func (r released) checkNotes(t *testing.T) {
	notes, err := os.ReadFile(filepath.Join(r.dist, "RELEASE-NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(r.root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := "## " + r.version + "\n\n" + string(notes)
	if strings.TrimSpace(string(notes)) == "" || !strings.Contains(string(changelog), section) {
		t.Errorf("RELEASE-NOTES.md is not the section of %s in CHANGELOG.md:\n%s", r.version, notes)
	}
	if strings.Contains(string(notes), "\n## ") {
		t.Errorf("RELEASE-NOTES.md holds more than one section:\n%s", notes)
	}
}

// notReproduced names the one file of a release that a second assembly does not make the same:
// the catalog image's archive, whose image holds the cache that `opm serve --cache-only` writes
// (catalog.Dockerfile, as opm generates it), a pogreb database whose index opm seeds at random
// (tmp/cache/pogreb.v1/db/*.pmt, *.pix differ between two builds of the same catalog). Its
// catalog, the layer /configs, was the same in the builds compared when this was written;
// images.txt then differs in the catalog's line only.
var notReproduced = regexp.MustCompile(`^oaat-operator-catalog-v[^ ]*\.oci\.tar$|^quay\.io/oaat-io/oaat-operator-catalog:`)

// reproducible drops the lines about what notReproduced names: the catalog's archive from
// SHA256SUMS (with images.txt, checked line by line instead), its line from images.txt.
func reproducible(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		fields := strings.Fields(l)
		return len(fields) > 0 && (notReproduced.MatchString(fields[0]) || notReproduced.MatchString(fields[len(fields)-1]) ||
			fields[len(fields)-1] == "images.txt")
	})
}

// checkReproducible assembles the release again from scratch (its images rebuilt in an empty
// bin/images of their own, no REGISTRY) and checks that SHA256SUMS, which lists every file but
// the signatures, is the same, the catalog image aside (notReproduced), and so is every line of
// images.txt but the catalog's; then rebuilds the linux/amd64 plugin archive in an empty GOCACHE
// and checks it is the release's, byte for byte.
func (r released) checkReproducible(t *testing.T) {
	start := time.Now()
	again := t.TempDir()
	makeRelease(t, r.root, "DIST="+again, "IMAGES_DIR="+t.TempDir(), "RELEASE_ALLOW_DIRTY=1")
	t.Logf("the second make release (images rebuilt) took %s", time.Since(start).Round(time.Second))
	for _, file := range []string{"SHA256SUMS", "images.txt"} {
		first, second := lines(t, filepath.Join(r.dist, file)), lines(t, filepath.Join(again, file))
		if a, b := reproducible(first), reproducible(second); len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("a second assembly differs in %s:\nfirst:\n%s\nsecond:\n%s", file, strings.Join(first, "\n"), strings.Join(second, "\n"))
		} else {
			t.Logf("%s: %d of %d lines the same in a second assembly (the catalog image's aside):\n%s", file, len(a), len(first), strings.Join(a, "\n"))
		}
	}

	start = time.Now()
	krew := t.TempDir()
	cmd := exec.Command("make", "-C", r.root, "krew-archives", "KREW_DIR="+krew, "KREW_PLATFORMS=linux/amd64")
	cmd.Env = append(os.Environ(), "GOCACHE="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make krew-archives in an empty GOCACHE: %v\n%s", err, out)
	}
	name := fmt.Sprintf("kubectl-oaat_v%s_linux_amd64.tar.gz", r.version)
	if a, b := fileSHA256(t, filepath.Join(r.dist, name)), fileSHA256(t, filepath.Join(krew, name)); a != b {
		t.Errorf("%s built in an empty GOCACHE has the sha256 %s, the release's %s", name, b, a)
	}
	t.Logf("rebuilt %s in an empty GOCACHE in %s: identical", name, time.Since(start).Round(time.Second))
}
