package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's first command must work on a fresh machine: every make target that runs a script of
// the local cluster builds what that script uses, whatever an earlier command happened to build
// (issue 24: `make demo` built no CoreDNS image, which only `make test` did, and stopped after 14
// minutes on a pod in ErrImagePull). Each target is dry-run (make -n) with empty tool and build
// directories, so that make plans every build from nothing; the script's command line then says
// what it will use.

// scriptTarget is a make target and the command of its recipe that runs the cluster's scripts.
type scriptTarget struct {
	target  string
	vars    []string // variables on the make command line
	command string   // a substring of the recipe line that starts the script or suite
	// realNode: the script starts the cluster with its real node, which runs its sandbox and DNS
	// images and needs the node's binaries and Debian packages.
	realNode bool
	// images: the images its pods run beyond the real node's own, by their names in make images.
	images []string
}

var scriptTargets = []scriptTarget{
	{target: "demo", command: "hack/demo.sh up", realNode: true, images: sampleImages},
	{target: "cluster-up", vars: []string{"OAAT_CLUSTER_REAL_NODE=1"}, command: "hack/cluster/cluster.sh up", realNode: true},
	{target: "cluster-up", command: "hack/cluster/cluster.sh up"},
	{target: "real-node-smoke", command: "hack/cluster/realnode-smoke.sh", realNode: true, images: []string{"busybox"}},
	{target: "test-realnode", command: "go test -tags realnode", realNode: true, images: []string{"busybox", "restic", "operator"}},
	{target: "test-e2e", command: "--tags e2e --procs"},
	{target: "docs-transcripts", command: "--tags e2e --procs"},
	{target: "test-olm-install", command: "go test -tags olminstall"},
	{target: "test-olm-catalog", command: "go test -tags olmcatalog", realNode: true, images: []string{"busybox", "operator", "olm", "opm", "catalog"}},
}

// realNodeBinaries are the variables of the binaries that only a real node uses: every cluster
// command is given them (the Makefile's CLUSTER_ENV), the kwok-only ones leave them unused.
var realNodeBinaries = []string{"KUBELET", "CRI_TEARDOWN", "KUBE_PROXY"}

// sampleImages are the images of config/samples' pod templates (checked against the samples by
// TestSampleImages).
var sampleImages = []string{"busybox", "restic"}

// imageOfPublicName maps the public name of an image (as the scripts and manifests name it) to
// its name in make images (hack/images/build.sh).
var imageOfPublicName = []struct{ prefix, image string }{
	{"registry.k8s.io/pause:", "pause"},
	{"registry.k8s.io/coredns/coredns:", "coredns"},
	{"docker.io/library/busybox:", "busybox"},
	{"busybox", "busybox"},
	{"docker.io/restic/restic:", "restic"},
	{"quay.io/oaat-io/oaat-operator:", "operator"},
}

// realNodePackages are the commands of hack/cluster/realnode.sh's require_real_node_binaries,
// each of a Debian package that the target must install when missing.
var realNodePackages = []string{"containerd", "runc", "containernetworking-plugins", "docker-registry", "iptables", "iproute2"}

var (
	// outputRE is the output file of a go build in a dry run (a tool goes through a temporary file).
	outputRE = regexp.MustCompile(`(?:^|\s)-o\s+(\S+?)(?:\.tmp\.\S*)?(?:\s|$)`)
	// envPathRE is an assignment of an absolute path on a command line.
	envPathRE = regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9_]*)=(/\S+)`)
	// releaseRE is a run of make release's assembly or make previous-release's, with the
	// directory it writes.
	releaseRE = regexp.MustCompile(`(?:^|\s)DIST=(\S+)\s.*hack/release/release\.sh (?:assemble|previous)`)
	// imagesRE is a run of hack/images/build.sh, with the images it builds (none: all).
	imagesRE = regexp.MustCompile(`hack/images/build\.sh((?:\s+[a-z][a-z0-9-]*)*)\s*$`)
)

// dryRun returns the commands that make would run for target from nothing, continuation lines
// joined, and the directories it was given for the clone's builds and the tools.
func dryRun(t *testing.T, st scriptTarget) (lines, dirs []string) {
	t.Helper()
	tmp := t.TempDir()
	localBin, toolsCache := filepath.Join(tmp, "bin"), filepath.Join(tmp, "tools")
	args := append([]string{"-n", "--no-print-directory", st.target, "LOCALBIN=" + localBin, "TOOLS_CACHE=" + toolsCache}, st.vars...)
	cmd := exec.Command("make", args...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Split(strings.ReplaceAll(string(out), "\\\n", " "), "\n"), []string{localBin, toolsCache}
}

func TestScriptTargetsBuildWhatTheyUse(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is not installed: the README's commands need it")
	}
	for _, st := range scriptTargets {
		t.Run(strings.Join(append([]string{st.target}, st.vars...), " "), func(t *testing.T) {
			lines, dirs := dryRun(t, st)
			var script string
			built := map[string]bool{}
			var images []string
			allImages := false
			packages := false
			for _, l := range lines {
				for _, m := range outputRE.FindAllStringSubmatch(l, -1) {
					built[m[1]] = true
				}
				if m := releaseRE.FindStringSubmatch(l); m != nil {
					built[m[1]] = true
				}
				if m := imagesRE.FindStringSubmatch(l); m != nil {
					images = append(images, strings.Fields(m[1])...)
					allImages = allImages || strings.TrimSpace(m[1]) == ""
				}
				if strings.Contains(l, strings.Join(realNodePackages, " ")) {
					packages = true
				}
				if strings.Contains(l, st.command) {
					script = l
				}
			}
			if script == "" {
				t.Fatalf("make -n %s runs no %q:\n%s", st.target, st.command, strings.Join(lines, "\n"))
			}
			for _, m := range envPathRE.FindAllStringSubmatch(script, -1) {
				name, path := m[1], m[2]
				inside := slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(path, d+"/") })
				unused := !st.realNode && slices.Contains(realNodeBinaries, name)
				if !inside || unused || name == "IMAGES_DIR" || built[path] {
					continue
				}
				t.Errorf("%s passes %s=%s to %q, but does not build it", st.target, name, path, st.command)
			}
			if !st.realNode {
				return
			}
			if !packages {
				t.Errorf("%s starts a real node but does not install its Debian packages (%s)", st.target, strings.Join(realNodePackages, " "))
			}
			want := append([]string{imageOf(t, envValue(script, "OAAT_PAUSE_IMAGE")), imageOf(t, envValue(script, "OAAT_COREDNS_IMAGE"))}, st.images...)
			for _, image := range want {
				if !allImages && !slices.Contains(images, image) {
					t.Errorf("%s starts a real node whose pods run image %s, but builds only %v", st.target, image, images)
				}
			}
		})
	}
}

// envValue is the value of NAME=value on a command line.
func envValue(line, name string) string {
	m := regexp.MustCompile(`(?:^|\s)` + name + `=(\S+)`).FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// imageOf is the name in make images of the image with public name public.
func imageOf(t *testing.T, public string) string {
	t.Helper()
	for _, p := range imageOfPublicName {
		if strings.HasPrefix(public, p.prefix) {
			return p.image
		}
	}
	t.Fatalf("no image of make images is known for %q", public)
	return ""
}

// TestSampleImages keeps sampleImages equal to the images that config/samples' pods run.
func TestSampleImages(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	imageRE := regexp.MustCompile(`(?m)^\s*image:\s*["']?([^"'\s]+)`)
	var got []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range imageRE.FindAllStringSubmatch(string(b), -1) {
			if image := imageOf(t, m[1]); !slices.Contains(got, image) {
				got = append(got, image)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, sampleImages) {
		t.Errorf("config/samples' pods run the images %v; sampleImages says %v", got, sampleImages)
	}
}
