// Command krew writes the krew manifest of the kubectl oaat plugin from its template
// (hack/krew/oaat.yaml) and the plugin's archives, which `make krew-manifest` builds:
//
//	go run ./hack/krew -version 0.3.0 -url URL -dir bin/krew -platforms "linux/amd64 darwin/arm64" \
//		-o bin/krew/oaat.yaml hack/krew/oaat.yaml
//
// The archive of a platform is DIR/kubectl-oaat_vVERSION_OS_ARCH.tar.gz, and its URI in the
// manifest URL/ and that name. The manifest is checked before it is written: the fields krew
// reads, each platform of -platforms once, and each archive's sha256 and binary.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// binary is the plugin's executable in each archive, the platforms' bin.
const binary = "kubectl-oaat"

// options say what the manifest describes.
type options struct {
	// version is the plugin's version without the "v" (the Makefile's VERSION).
	version string
	// url is where the archives are downloaded from: a platform's uri is url/archiveName.
	url string
	// dir holds the archives.
	dir string
	// platforms are the archives' OS/ARCH.
	platforms []string
}

func main() {
	var o options
	var platforms, output string
	flag.StringVar(&o.version, "version", "", "the plugin's version, without the v")
	flag.StringVar(&o.url, "url", "", "the URL the archives are downloaded from")
	flag.StringVar(&o.dir, "dir", "", "the directory of the archives")
	flag.StringVar(&platforms, "platforms", "", "the archives' platforms, OS/ARCH separated by spaces")
	flag.StringVar(&output, "o", "", "the manifest to write")
	flag.Parse()
	o.platforms = strings.Fields(platforms)
	if flag.NArg() != 1 || o.version == "" || o.url == "" || o.dir == "" || len(o.platforms) == 0 || output == "" {
		fmt.Fprintln(os.Stderr, "usage: krew -version V -url URL -dir DIR -platforms 'OS/ARCH ...' -o OUTPUT TEMPLATE")
		os.Exit(2)
	}
	tmpl, err := os.ReadFile(flag.Arg(0))
	if err == nil {
		var manifest []byte
		if manifest, err = fill(tmpl, o); err == nil {
			err = os.WriteFile(output, manifest, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "krew: %v\n", err)
		os.Exit(1)
	}
}

// archiveName is the name of the archive of a platform (OS/ARCH).
func archiveName(version, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	return fmt.Sprintf("%s_v%s_%s_%s.tar.gz", binary, version, goos, goarch)
}

// fill executes the template, its leading comment lines left out, with the functions version,
// uri PLATFORM and sha256 PLATFORM, and checks the manifest.
func fill(tmpl []byte, o options) ([]byte, error) {
	body := string(tmpl)
	for strings.HasPrefix(body, "#") {
		_, body, _ = strings.Cut(body, "\n")
	}
	named := map[string]int{}
	platform := func(p string) error {
		if !slices.Contains(o.platforms, p) {
			return fmt.Errorf("the template names the platform %s, which has no archive (platforms %v)", p, o.platforms)
		}
		return nil
	}
	funcs := template.FuncMap{
		"version": func() string { return o.version },
		"uri": func(p string) (string, error) {
			return strings.TrimSuffix(o.url, "/") + "/" + archiveName(o.version, p), platform(p)
		},
		"sha256": func(p string) (string, error) {
			if err := platform(p); err != nil {
				return "", err
			}
			named[p]++
			return archiveSum(filepath.Join(o.dir, archiveName(o.version, p)))
		},
	}
	t, err := template.New("manifest").Funcs(funcs).Parse(body)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The krew manifest of the kubectl oaat plugin v%s, written by `make krew-manifest`\n", o.version)
	b.WriteString("# (hack/krew) from hack/krew/oaat.yaml.\n")
	if err := t.Execute(&b, nil); err != nil {
		return nil, err
	}
	for _, p := range o.platforms {
		if named[p] != 1 {
			return nil, fmt.Errorf("the template gives the platform %s %d archives, not one", p, named[p])
		}
	}
	if err := validate(b.Bytes(), o); err != nil {
		return nil, fmt.Errorf("the manifest: %w\n%s", err, b.Bytes())
	}
	return b.Bytes(), nil
}

func archiveSum(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// manifest is a krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2), the fields
// this one uses.
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Platforms        []platform `json:"platforms"`
	} `json:"spec"`
}

type platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

var (
	// semverRE is a semantic version with krew's v.
	semverRE = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// validate checks a manifest for the archives of o: the kind krew installs, named oaat (kubectl
// oaat), the version, the descriptions, and one platform per archive, selected by its os and
// arch, with the archive's URI and sha256 and the binary the archive holds as its bin. Fields
// krew does not know are refused.
func validate(data []byte, o options) error {
	var m manifest
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return err
	}
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(m.APIVersion == "krew.googlecontainertools.github.com/v1alpha2", "apiVersion %q", m.APIVersion)
	check(m.Kind == "Plugin", "kind %q", m.Kind)
	check(m.Metadata.Name == "oaat", "metadata.name %q: kubectl runs the plugin as kubectl oaat", m.Metadata.Name)
	check(m.Spec.Version == "v"+o.version && semverRE.MatchString(m.Spec.Version), "spec.version %q: want v%s, a semantic version", m.Spec.Version, o.version)
	check(m.Spec.Homepage != "" && m.Spec.ShortDescription != "" && m.Spec.Description != "", "spec.homepage, shortDescription and description are required")
	seen := map[string]bool{}
	for i, p := range m.Spec.Platforms {
		labels := p.Selector.MatchLabels
		name := labels["os"] + "/" + labels["arch"]
		check(len(labels) == 2 && slices.Contains(o.platforms, name) && !seen[name],
			"platforms[%d]: selector.matchLabels %v: want os and arch of one of %v, each once", i, labels, o.platforms)
		seen[name] = true
		archive := archiveName(o.version, name)
		check(p.URI == strings.TrimSuffix(o.url, "/")+"/"+archive, "platforms[%d] (%s): uri %q", i, name, p.URI)
		check(path.Base(p.URI) == archive && strings.HasSuffix(p.URI, ".tar.gz"), "platforms[%d] (%s): uri %q names no archive of the platform", i, name, p.URI)
		check(sha256RE.MatchString(p.SHA256), "platforms[%d] (%s): sha256 %q", i, name, p.SHA256)
		if sum, err := archiveSum(filepath.Join(o.dir, archive)); err != nil {
			errs = append(errs, fmt.Errorf("platforms[%d] (%s): %w", i, name, err))
		} else if sum != p.SHA256 {
			errs = append(errs, fmt.Errorf("platforms[%d] (%s): sha256 %s, the archive's %s", i, name, p.SHA256, sum))
		}
		check(p.Bin == binary, "platforms[%d] (%s): bin %q, want %s", i, name, p.Bin, binary)
		if err := holdsBinary(filepath.Join(o.dir, archive), p.Bin); err != nil {
			errs = append(errs, fmt.Errorf("platforms[%d] (%s): %w", i, name, err))
		}
	}
	for _, p := range o.platforms {
		check(seen[p], "no platform selects %s", p)
	}
	return errors.Join(errs...)
}

// holdsBinary checks that the tar.gz archive holds bin, an executable file, at its root (krew
// extracts every file of an archive whose platform lists no files).
func holdsBinary(archive, bin string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	r := tar.NewReader(gz)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s holds no %s", archive, bin)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		if path.Clean(h.Name) == bin {
			if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 {
				return fmt.Errorf("%s: %s is not an executable file", archive, bin)
			}
			return nil
		}
	}
}
