package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The OCI media types a layout may hold (and Docker's, which buildah may write).
const (
	mediaTypeIndex        = "application/vnd.oci.image.index.v1+json"
	mediaTypeDockerList   = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaTypeLayerTarGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
	mediaTypeLayerTar     = "application/vnd.oci.image.layer.v1.tar"
	mediaTypeDockerLayer  = "application/vnd.docker.image.rootfs.diff.tar.gzip"
)

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Platform  *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform,omitempty"`
}

// manifest is an OCI image manifest or image index (the fields of both that are read here).
type manifest struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
}

// imageConfig is what is read of an OCI image configuration.
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string   `json:"User"`
		Entrypoint []string `json:"Entrypoint"`
	} `json:"config"`
}

// layout is an OCI image layout directory.
type layout string

func (l layout) blob(digest string) ([]byte, error) {
	algorithm, hex, ok := strings.Cut(digest, ":")
	if !ok {
		return nil, fmt.Errorf("malformed digest %q", digest)
	}
	return os.ReadFile(filepath.Join(string(l), "blobs", algorithm, hex))
}

func (l layout) json(digest string, v any) error {
	raw, err := l.blob(digest)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// checkLayout checks that the one image (or image index) of the OCI layout dir keeps contract
// c on each of platforms (os/arch), and holds no other platform: the config's user and
// entrypoint are the contract's, and the program is an executable, statically linked ELF file of
// the platform's architecture. All problems are returned together.
func checkLayout(c Contract, dir string, platforms []string) error {
	l := layout(dir)
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return err
	}
	var index manifest
	if err := json.Unmarshal(raw, &index); err != nil {
		return fmt.Errorf("index.json: %w", err)
	}
	if len(index.Manifests) != 1 {
		return fmt.Errorf("%s holds %d images, want one", dir, len(index.Manifests))
	}
	images := index.Manifests
	if top := index.Manifests[0]; top.MediaType == mediaTypeIndex || top.MediaType == mediaTypeDockerList {
		var list manifest
		if err := l.json(top.Digest, &list); err != nil {
			return fmt.Errorf("the image index: %w", err)
		}
		images = list.Manifests
	}
	var (
		problems []error
		seen     []string
	)
	for _, d := range images {
		platform, err := checkImage(l, c, d.Digest)
		if err != nil {
			problems = append(problems, err)
		}
		if d.Platform != nil && d.Platform.OS+"/"+d.Platform.Architecture != platform {
			problems = append(problems, fmt.Errorf("%s: the index says %s/%s, the config %s", d.Digest, d.Platform.OS, d.Platform.Architecture, platform))
		}
		seen = append(seen, platform)
	}
	slices.Sort(seen)
	want := slices.Sorted(slices.Values(platforms))
	if !slices.Equal(seen, want) {
		problems = append(problems, fmt.Errorf("%s holds platforms %v, want %v", dir, seen, want))
	}
	return errors.Join(problems...)
}

// checkImage checks one image manifest against c and returns its platform.
func checkImage(l layout, c Contract, digest string) (platform string, err error) {
	var m manifest
	if err := l.json(digest, &m); err != nil {
		return "", fmt.Errorf("manifest %s: %w", digest, err)
	}
	var config imageConfig
	if err := l.json(m.Config.Digest, &config); err != nil {
		return "", fmt.Errorf("config of %s: %w", digest, err)
	}
	platform = config.OS + "/" + config.Architecture
	var problems []error
	if config.Config.User != c.User {
		problems = append(problems, fmt.Errorf("%s: user %q, the Dockerfile says %q", platform, config.Config.User, c.User))
	}
	if !slices.Equal(config.Config.Entrypoint, c.Entrypoint) {
		problems = append(problems, fmt.Errorf("%s: entrypoint %q, the Dockerfile says %q", platform, config.Config.Entrypoint, c.Entrypoint))
	}
	program, mode, err := findFile(l, m.Layers, c.Program)
	switch {
	case err != nil:
		problems = append(problems, fmt.Errorf("%s: %w", platform, err))
	case mode&0o111 == 0:
		problems = append(problems, fmt.Errorf("%s: %s is not executable (mode %v)", platform, c.Program, mode))
	default:
		if err := checkProgram(program, config.Architecture); err != nil {
			problems = append(problems, fmt.Errorf("%s: %s: %w", platform, c.Program, err))
		}
	}
	return platform, errors.Join(problems...)
}

// findFile returns the content and mode of the regular file at name in the image whose layers
// are given (the last layer that has it wins; a whiteout deletes it).
func findFile(l layout, layers []descriptor, name string) ([]byte, os.FileMode, error) {
	want := strings.TrimPrefix(path.Clean(name), "/")
	var (
		content []byte
		mode    os.FileMode
		found   bool
	)
	for _, layer := range layers {
		raw, err := l.blob(layer.Digest)
		if err != nil {
			return nil, 0, err
		}
		var r io.Reader = bytes.NewReader(raw)
		switch layer.MediaType {
		case mediaTypeLayerTarGzip, mediaTypeDockerLayer:
			if r, err = gzip.NewReader(r); err != nil {
				return nil, 0, fmt.Errorf("layer %s: %w", layer.Digest, err)
			}
		case mediaTypeLayerTar:
		default:
			return nil, 0, fmt.Errorf("layer %s: media type %s is not supported here", layer.Digest, layer.MediaType)
		}
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, 0, fmt.Errorf("layer %s: %w", layer.Digest, err)
			}
			entry := strings.TrimPrefix(path.Clean(h.Name), "/")
			if entry == path.Join(path.Dir(want), ".wh."+path.Base(want)) {
				content, found = nil, false
				continue
			}
			if entry != want {
				continue
			}
			if h.Typeflag != tar.TypeReg {
				return nil, 0, fmt.Errorf("%s is not a regular file in layer %s", name, layer.Digest)
			}
			if content, err = io.ReadAll(tr); err != nil {
				return nil, 0, err
			}
			mode, found = h.FileInfo().Mode(), true
		}
	}
	if !found {
		return nil, 0, fmt.Errorf("no file %s in the image", name)
	}
	return content, mode, nil
}

// elfMachines maps the GOARCH names that images use to ELF machines.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// checkProgram checks that program is an ELF executable for arch that needs no dynamic loader:
// the images are FROM scratch, with no libc to load.
func checkProgram(program []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		return fmt.Errorf("not an ELF file: %w", err)
	}
	defer func() { _ = f.Close() }()
	if want, known := elfMachines[arch]; !known || f.Machine != want {
		return fmt.Errorf("built for %v, the image is for %s", f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("dynamically linked (it asks for a program interpreter)")
		}
	}
	return nil
}
