package support

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A block that starts a command in the background and ends it returns at once; one whose command
// after it fails returns the failure within blockLeftovers, and the command it left is ended.
func TestRunCheckedBlockEndsWhatTheBlockLeftInTheBackground(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	start := time.Now()
	out, err := RunCheckedBlock(ctx, t.TempDir(), nil, CheckedBlock{File: "page.md", Line: 1, Text: "sleep 300 >/dev/null &\necho ran\nkill %1\n"}, nil)
	if err != nil || out != "ran\n" {
		t.Fatalf("a block that ends its background command: got %q, %v", out, err)
	}
	if took := time.Since(start); took > blockLeftovers {
		t.Errorf("a block that ends its background command took %s", took)
	}

	start = time.Now()
	out, err = RunCheckedBlock(ctx, t.TempDir(), nil, CheckedBlock{File: "page.md", Line: 1, Text: "sleep 300 &\necho $!\nfalse\nkill %1\n"}, nil)
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "page.md:1: exit status 1") {
		t.Errorf("a block whose command fails: got error %v, want page.md:1: exit status 1", err)
	}
	if took > 2*blockLeftovers {
		t.Errorf("a block that leaves a command in the background took %s, want at most %s", took, 2*blockLeftovers)
	}
	pid, perr := strconv.Atoi(strings.TrimSpace(out))
	if perr != nil {
		t.Fatalf("the block's output %q is no pid: %v", out, perr)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the block's background sleep %d still runs: kill -0 said %v", pid, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
