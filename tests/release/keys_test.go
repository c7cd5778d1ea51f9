// Package release checks the release that `make release` writes (release_test.go, build tag
// release, `make test-release`) and, in every `go test ./...`, that no private key is tracked:
// the key that signs a release is the maintainer's (RELEASE_GPG_KEY) or one made for a single
// build, and neither may enter the repository.
package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// privateKeyHeader matches the armour of a private key: PEM (PKCS #1 and #8, EC, OpenSSH,
// encrypted, sigstore's and cosign's) and OpenPGP secret key blocks.
var privateKeyHeader = regexp.MustCompile(`-{5}BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-{5}`)

// privateKeyFile matches the names private keys are usually kept under.
var privateKeyFile = regexp.MustCompile(`(^|/)(cosign\.key|[^/]*\.(key|pem|p12|pfx|gpg|kbx)|secring\.[^/]*|private-keys-v1\.d/.*)$`)

func TestNoPrivateKeyIsTracked(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not the repository", len(files))
	}
	for _, f := range files {
		name := string(f)
		if privateKeyFile.MatchString(name) {
			t.Errorf("%s is tracked: its name is a private key's", name)
		}
		content, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			continue // deleted in the work tree, or a submodule
		}
		if m := privateKeyHeader.Find(content); m != nil {
			t.Errorf("%s is tracked and holds a private key (%s)", name, m)
		}
	}
}

func TestPrivateKeyPatterns(t *testing.T) {
	for _, header := range []string{"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
		"ENCRYPTED PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY", "ENCRYPTED SIGSTORE PRIVATE KEY", "PGP PRIVATE KEY BLOCK"} {
		if !privateKeyHeader.MatchString("x\n-----BEGIN " + header + "-----\nabc") {
			t.Errorf("the header of a %s is not recognised", header)
		}
	}
	for _, header := range []string{"PUBLIC KEY", "PGP PUBLIC KEY BLOCK", "CERTIFICATE", "PGP SIGNATURE"} {
		if privateKeyHeader.MatchString("-----BEGIN " + header + "-----") {
			t.Errorf("the header of a %s is taken for a private key's", header)
		}
	}
	for _, name := range []string{"cosign.key", "hack/release.key", "keys/x.pem", "gnupg/private-keys-v1.d/AB.key", "secring.gpg"} {
		if !privateKeyFile.MatchString(name) {
			t.Errorf("%s is not taken for a private key's name", name)
		}
	}
	for _, name := range []string{"dist/signing-key.asc", "hack/keys.go", "docs/install.md"} {
		if privateKeyFile.MatchString(name) {
			t.Errorf("%s is taken for a private key's name", name)
		}
	}
}
