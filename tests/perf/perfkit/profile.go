package perfkit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// HeapTop is the top of the heap profile at path by the memory in use, one line per function
// (go tool pprof -top: flat, its share, the running sum, cumulative), at most n of them, after a
// line that says how much the profile holds in all.
func HeapTop(ctx context.Context, path string, n int) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space",
		"-nodecount="+strconv.Itoa(n), path).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %s: %w: %s", path, err, out)
	}
	return heapTopLines(string(out)), nil
}

// heapTopLines keeps of pprof's -top output the total ("Showing nodes accounting for ...") and
// the table, without the file and type headers.
func heapTopLines(out string) []string {
	var kept []string
	table := false
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "Showing nodes accounting for"):
			kept = append(kept, line)
		case strings.Contains(line, "flat%") && strings.Contains(line, "cum%"):
			table = true
			kept = append(kept, line)
		case table:
			kept = append(kept, line)
		}
	}
	return kept
}

// heapAlloc reads the value of "# HeapAlloc = N" in a heap profile's text form (debug=1).
func heapAlloc(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# HeapAlloc = "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no HeapAlloc line in the heap profile")
}
