package perfkit

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// retained keeps TestHeapTop's allocation live until the profile is written.
var retained [][]byte

// TestHeapTop writes this test's own heap profile, holding 64 MiB allocated by one function, and
// reads its top with go tool pprof: the total line, the table's header, that function among the
// rows, and no more rows than asked. A heap profile shows the heap as of the last completed
// collection, so one runs after the allocation (without it, the profile may predate it).
func TestHeapTop(t *testing.T) {
	retained = holdHeap(64)
	runtime.GC()
	path := filepath.Join(t.TempDir(), "heap.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	retained = nil

	top, err := HeapTop(context.Background(), path, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(top) < 3 || len(top) > 5 || !strings.HasPrefix(top[0], "Showing nodes accounting for") ||
		!strings.Contains(top[1], "flat%") {
		t.Fatalf("the top of 3 nodes is not a total, a header and at most 3 rows:\n%s", strings.Join(top, "\n"))
	}
	if joined := strings.Join(top, "\n"); !strings.Contains(joined, "perfkit.holdHeap") {
		t.Fatalf("the function holding 64 MiB is not in the top:\n%s", joined)
	}
}

// holdHeap allocates mib MiB in blocks of 1 MiB.
func holdHeap(mib int) [][]byte {
	blocks := make([][]byte, mib)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
	}
	return blocks
}

func TestHeapTopLines(t *testing.T) {
	out := `File: manager
Type: inuse_space
Time: 2026-11-25 22:00:00 UTC
Showing nodes accounting for 120MB, 95.24% of 126MB total
Dropped 300 nodes (cum <= 0.63MB)
Showing top 2 nodes out of 150
      flat  flat%   sum%        cum   cum%
      40MB 31.75% 31.75%       40MB 31.75%  k8s.io/apimachinery/pkg/runtime.(*Unknown).Unmarshal
      20MB 15.87% 47.62%       20MB 15.87%  reflect.New
`
	want := `Showing nodes accounting for 120MB, 95.24% of 126MB total
      flat  flat%   sum%        cum   cum%
      40MB 31.75% 31.75%       40MB 31.75%  k8s.io/apimachinery/pkg/runtime.(*Unknown).Unmarshal
      20MB 15.87% 47.62%       20MB 15.87%  reflect.New`
	if got := strings.Join(heapTopLines(out), "\n"); got != want {
		t.Fatalf("heapTopLines =\n%s\nwant\n%s", got, want)
	}
}

// TestHeapAlloc reads HeapAlloc from this process's own heap profile in its text form, which
// must agree with runtime.ReadMemStats taken just before (the heap barely moves in between).
func TestHeapAlloc(t *testing.T) {
	retained = holdHeap(16)
	var text strings.Builder
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if err := pprof.Lookup("heap").WriteTo(&text, 1); err != nil {
		t.Fatal(err)
	}
	got, err := heapAlloc(strings.NewReader(text.String()))
	retained = nil
	if err != nil {
		t.Fatal(err)
	}
	if got < 16<<20 || math.Abs(float64(got)-float64(ms.HeapAlloc)) > 8<<20 {
		t.Fatalf("HeapAlloc %d, runtime.ReadMemStats %d, holding 16 MiB", got, ms.HeapAlloc)
	}
	if _, err := heapAlloc(strings.NewReader("heap profile: 0: 0 [0: 0] @ heap/1048576\n")); err == nil {
		t.Fatal("a profile without HeapAlloc read without an error")
	}
}
