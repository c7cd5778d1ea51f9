package support

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// The shell commands a page tells its reader to type are run by a test, not copied into one: the
// ```sh block right after the comment <!-- checked-by: tests/PKG NAME --> is read from the page by
// the test of package tests/PKG that calls CheckedBlocks with NAME, and its commands are run as
// the page shows them (tests/docs checks that every command of the docs is in such a block, in a
// transcript, or in its short list of commands no test runs, each with its reason). A ```yaml
// block that is not a Kubernetes object (an Alertmanager route) is marked the same way: the test
// reads it from the page and runs what it configures.

// checkedByRE is the marker of a block a test runs: the test's package and the blocks' name.
var checkedByRE = regexp.MustCompile(`^<!--\s*checked-by:\s*(tests/[a-z0-9]+)\s+([a-z0-9-]+)\s*-->$`)

// ParseCheckedBy returns the package and name of a checked-by marker ("checked-by: tests/e2e
// runbooks", without the comment's delimiters), and whether it is one.
func ParseCheckedBy(marker string) (pkg, name string, ok bool) {
	m := checkedByRE.FindStringSubmatch("<!-- " + marker + " -->")
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// CheckedBlock is a shell block of a page that a test runs.
type CheckedBlock struct {
	// File is the page, relative to the repository's root; Line the line of the opening fence.
	File string
	Line int
	// Lang is the fence's info string: sh, bash or yaml.
	Lang string
	// Text is the block's content, without the indentation of a list item.
	Text string
}

// Where names the block in a failure message.
func (b CheckedBlock) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// CheckedBlocks returns the blocks of the docs (DocPages) marked <!-- checked-by: pkg name -->,
// in page order. It is an error when there is none, or when a marker is not followed by a ```sh,
// ```bash or ```yaml block.
func CheckedBlocks(root, pkg, name string) ([]CheckedBlock, error) {
	files, err := DocPages(root)
	if err != nil {
		return nil, err
	}
	var blocks []CheckedBlock
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			m := checkedByRE.FindStringSubmatch(strings.TrimSpace(lines[i]))
			if len(m) != 3 || m[1] != pkg || m[2] != name {
				continue
			}
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			var lang string
			if j < len(lines) {
				lang = strings.TrimPrefix(strings.TrimSpace(lines[j]), "```")
			}
			if lang != "sh" && lang != "bash" && lang != "yaml" {
				return nil, fmt.Errorf("%s:%d: the marker checked-by: %s %s must be followed by a ```sh or ```yaml block", file, i+1, pkg, name)
			}
			indent := lines[j][:len(lines[j])-len(strings.TrimLeft(lines[j], " "))]
			var text strings.Builder
			k := j + 1
			for ; k < len(lines) && strings.TrimSpace(lines[k]) != "```"; k++ {
				text.WriteString(strings.TrimPrefix(lines[k], indent) + "\n")
			}
			if k == len(lines) {
				return nil, fmt.Errorf("%s:%d: the block is not closed", file, j+1)
			}
			blocks = append(blocks, CheckedBlock{File: file, Line: j + 1, Lang: lang, Text: text.String()})
			i = k
		}
	}
	if len(blocks) == 0 {
		return nil, fmt.Errorf("no page has a block marked <!-- checked-by: %s %s -->", pkg, name)
	}
	return blocks, nil
}

// placeholderRE finds the placeholders of the pages' commands, which stand for the reader's
// objects (troubleshooting, runbooks).
var placeholderRE = regexp.MustCompile(`\b(NAMESPACE|GROUP|ITEM|POD|NODE|LOCK)\b`)

// RunCheckedBlock runs the block as a user's shell does: bash -e -o pipefail, in dir (the
// repository's root: the pages' paths are relative to it), with env added to the process's
// environment (KUBECONFIG, a PATH that holds kubectl and kubectl-oaat), each placeholder of the
// pages replaced by its value in values. It returns what the commands printed (stdout and stderr)
// and an error naming the block when one failed or a placeholder has no value.
func RunCheckedBlock(ctx context.Context, dir string, env []string, b CheckedBlock, values map[string]string) (string, error) {
	if b.Lang == "yaml" {
		return "", fmt.Errorf("%s: a ```yaml block is read, not run", b.Where())
	}
	var missing []string
	text := placeholderRE.ReplaceAllStringFunc(b.Text, func(p string) string {
		v, ok := values[p]
		if !ok {
			missing = append(missing, p)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s: no value for the placeholders %v", b.Where(), missing)
	}
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", text)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// A command the block starts in the background (a port-forward) and that outlives it, because
	// a command after it failed, would hold the output open: Wait closes it after blockLeftovers,
	// and the block's process group, the background commands with it, is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = blockLeftovers
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
			err = errors.Join(err, fmt.Errorf("ending the commands the block left running: %w", kerr))
		}
	}
	if err != nil {
		return string(out), fmt.Errorf("%s: %w:\n%s\n%s", b.Where(), err, text, out)
	}
	return string(out), nil
}

// blockLeftovers is how long RunCheckedBlock waits, once the block's shell has ended, for the
// commands it left in the background to close its output.
const blockLeftovers = 5 * time.Second
