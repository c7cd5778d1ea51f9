package perfkit

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP apiserver_request_total Counter
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",group="",resource="pods",subresource="",verb="POST"} 12
apiserver_request_total{code="200",group="oaat.io",resource="oaatgroups",subresource="status",verb="PUT"} 3 1700000000
odd{msg="a \"quoted\", comma\\ and\nline"} 1.5e+00
plain 7
`
	samples, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 4 {
		t.Fatalf("got %d samples, want 4: %+v", len(samples), samples)
	}
	if got := samples.Sum("apiserver_request_total", map[string]string{"resource": "pods"}); got != 12 {
		t.Errorf("Sum(pods) = %v, want 12", got)
	}
	if got := samples.Sum("apiserver_request_total", nil); got != 15 {
		t.Errorf("Sum(all) = %v, want 15", got)
	}
	if got := samples[2].Labels["msg"]; got != "a \"quoted\", comma\\ and\nline" {
		t.Errorf("escaped label = %q", got)
	}
	if samples[3].Name != "plain" || samples[3].Value != 7 {
		t.Errorf("plain sample = %+v", samples[3])
	}
	for _, bad := range []string{"novalue", `x{a="b} 1`, `x{a} 1`, "x abc"} {
		if _, err := ParseMetrics(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseMetrics(%q): no error", bad)
		}
	}
}

func TestRequests(t *testing.T) {
	before := Requests{{Verb: "POST", Resource: "pods"}: 10}
	after := Requests{
		{Verb: "POST", Resource: "pods"}:                                               15,
		{Verb: "PUT", Group: "oaat.io", Resource: "oaatgroups", Subresource: "status"}: 5,
		{Verb: "GET", Resource: "pods"}:                                                100,
		{Verb: "PUT", Group: "coordination.k8s.io", Resource: "leases"}:                9,
	}
	d := after.Since(before)
	if got := d.Get("pods", "", "POST"); got != 5 {
		t.Errorf("pods POST since = %v, want 5", got)
	}
	if got := d.Count(WorkloadWrites); got != 10 {
		t.Errorf("workload writes = %v, want 10 (no GET, no lease)", got)
	}
	table := d.WriteTable(WorkloadWrites, 5)
	want := []string{"       5   1.00/run  oaatgroups.oaat.io/status PUT", "       5   1.00/run  pods POST"}
	if strings.Join(table, "\n") != strings.Join(want, "\n") {
		t.Errorf("WriteTable =\n%s\nwant\n%s", strings.Join(table, "\n"), strings.Join(want, "\n"))
	}
	if PerRun(3, 0) != 0 {
		t.Error("PerRun with no run is not 0")
	}
}

func TestPercentile(t *testing.T) {
	var l Latencies
	if l.Percentile(99) != 0 || l.Summary() != "no samples" {
		t.Error("empty latencies")
	}
	for i := 100; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond, 0.1: time.Millisecond} {
		if got := l.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if l.Min() != time.Millisecond || l.Max() != 100*time.Millisecond {
		t.Errorf("min %v, max %v, want 1ms and 100ms", l.Min(), l.Max())
	}
	if l[0] != 100*time.Millisecond {
		t.Error("Percentile sorted the samples in place")
	}
}

func TestBucketQuantile(t *testing.T) {
	text := `h_bucket{ns="a",le="0"} 2
h_bucket{ns="a",le="1"} 6
h_bucket{ns="a",le="5"} 9
h_bucket{ns="a",le="+Inf"} 10
h_bucket{ns="b",le="0"} 100
h_bucket{ns="b",le="1"} 100
h_bucket{ns="b",le="5"} 100
h_bucket{ns="b",le="+Inf"} 100
`
	samples, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	a := map[string]string{"ns": "a"}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.1, 0}, {0.2, 0}, {0.5, 1}, {0.6, 1}, {0.9, 5}, {0.99, math.Inf(1)}} {
		if got := samples.BucketQuantile("h_bucket", a, c.q); got != c.want {
			t.Errorf("q %v: %v, want %v", c.q, got, c.want)
		}
	}
	if got := samples.BucketQuantile("h_bucket", nil, 0.5); got != 0 {
		t.Errorf("both label sets, q 0.5: %v, want 0 (55 of 110 in the first bucket)", got)
	}
	if got := samples.BucketQuantile("h_bucket", map[string]string{"ns": "c"}, 0.5); got != 0 {
		t.Errorf("no bucket: %v, want 0", got)
	}
}

func TestKnobs(t *testing.T) {
	t.Setenv("PERFKIT_N", "12")
	t.Setenv("PERFKIT_D", "1m30s")
	t.Setenv("PERFKIT_BAD", "x")
	k := &Knobs{}
	if k.Int("PERFKIT_N", 1) != 12 || k.Duration("PERFKIT_D", 0) != 90*time.Second || k.Int("PERFKIT_UNSET", 4) != 4 {
		t.Error("knobs not read")
	}
	if k.Err() != nil {
		t.Fatal(k.Err())
	}
	if got := k.String(); got != "PERFKIT_N=12 PERFKIT_D=1m30s PERFKIT_UNSET=4" {
		t.Errorf("String = %q", got)
	}
	k.Duration("PERFKIT_BAD", time.Second)
	if k.Err() == nil {
		t.Error("a malformed duration: no error")
	}
}

func TestKnobsNames(t *testing.T) {
	allowed := []string{"a", "b", "c"}
	t.Setenv("PERFKIT_SOME", "c, a")
	t.Setenv("PERFKIT_WRONG", "a,x")
	k := &Knobs{}
	if got := k.Names("PERFKIT_SOME", allowed); len(got) != 2 || !got["a"] || !got["c"] {
		t.Errorf("Names(c, a) = %v", got)
	}
	if got := k.Names("PERFKIT_UNSET", allowed); len(got) != 3 {
		t.Errorf("Names(unset) = %v, want all", got)
	}
	if k.Err() != nil {
		t.Fatal(k.Err())
	}
	if got := k.String(); got != "PERFKIT_SOME=c, a PERFKIT_UNSET=a,b,c" {
		t.Errorf("String = %q", got)
	}
	k.Names("PERFKIT_WRONG", allowed)
	if k.Err() == nil || !strings.Contains(k.Err().Error(), `"x" is none of a, b, c`) {
		t.Errorf("an unknown name: error %v", k.Err())
	}
}

func TestWriteSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "performance.md")
	if err := os.WriteFile(path, []byte("# Analysis\n\nhand-written, quoting `<!-- bench:begin -->`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Report{out: &strings.Builder{}}
	r.Printf("first %d", 1)
	if err := r.WriteSection(path, "bench"); err != nil {
		t.Fatal(err)
	}
	r = &Report{out: &strings.Builder{}}
	r.Printf("second\nlines")
	if err := r.WriteSection(path, "bench"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "# Analysis\n\nhand-written, quoting `<!-- bench:begin -->`\n\n<!-- bench:begin -->\n```text\nsecond\nlines\n```\n<!-- bench:end -->\n"
	if string(data) != want {
		t.Errorf("file =\n%s\nwant\n%s", data, want)
	}
}

func TestReadUsage(t *testing.T) {
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS <= 0 || u.PeakRSS < u.RSS {
		t.Errorf("usage of this process = %+v", u)
	}
}

func TestWriteSectionNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs", "new.md")
	r := &Report{out: &strings.Builder{}}
	r.Printf("only")
	if err := r.WriteSection(path, "chaos"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if want := "<!-- chaos:begin -->\n```text\nonly\n```\n<!-- chaos:end -->\n"; string(data) != want {
		t.Errorf("file = %q, want %q", data, want)
	}
}

// A report names the manager by its path in the clone, not by the machine's path of the clone.
func TestInClone(t *testing.T) {
	for path, want := range map[string]string{
		"/tmp/bench-clone2/bin/manager": "bin/manager",
		"/usr/local/bin/manager":        "/usr/local/bin/manager",
		"":                              "",
	} {
		if got := inClone("/tmp/bench-clone2", path); got != want {
			t.Errorf("inClone(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestManagerArgs: a manager of another installation elects its leader in its own namespace,
// once; one without LeaseNamespace in the operator's.
func TestManagerArgs(t *testing.T) {
	m := &Manager{Kubeconfig: "kc", LeaderElect: true, metricsAddr: "m", probeAddr: "p", pprofAddr: "pp"}
	if got := strings.Join(m.args(), " "); !strings.Contains(got, "--leader-elect --leader-election-namespace oaat-operator-system") {
		t.Errorf("args = %q, want the Lease in the operator's namespace", got)
	}
	m.LeaseNamespace = "other"
	args := m.args()
	count := func(flag string) (n int) {
		for _, a := range args {
			if a == flag {
				n++
			}
		}
		return n
	}
	if got := strings.Join(args, " "); count("--leader-elect") != 1 || count("--leader-election-namespace") != 1 ||
		!strings.Contains(got, "--leader-elect --leader-election-namespace other") {
		t.Errorf("args = %q, want one --leader-elect with the Lease in other", got)
	}
	m.LeaderElect = false
	if got := strings.Join(m.args(), " "); strings.Contains(got, "leader-elect") {
		t.Errorf("args without leader election = %q", got)
	}
}
