package duration

import (
	"errors"
	"math"
	"math/big"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"1d", 24 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"1 hour 30 min", 90 * time.Minute},
		{"65m1h", 2*time.Hour + 5*time.Minute},
		{"30s", 30 * time.Second},
		{"2 weeks", 14 * 24 * time.Hour},
		{" 5 m ", 5 * time.Minute},
		{"1s1s1s", 3 * time.Second},
		{"0s1m", time.Minute},
		{"007m", 7 * time.Minute},
		{"1 sec 1 secs 1 second 1 seconds", 4 * time.Second},
		{"1min1mins1minute1minutes", 4 * time.Minute},
		{"1hr 1hrs 1hour 1hours", 4 * time.Hour},
		{"1day 1days", 2 * 24 * time.Hour},
		{"1wk 1wks 1week", 3 * 7 * 24 * time.Hour},
		{"1w2d3h4m5s", 7*24*time.Hour + 2*24*time.Hour + 3*time.Hour + 4*time.Minute + 5*time.Second},
		{"  1  h  ", time.Hour},
		{"2562047h47m16s", time.Duration(math.MaxInt64).Truncate(time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantMsg string
	}{
		{"", "it is empty"},
		{"   ", "it is empty"},
		{"0s", "it is zero, a duration must be positive"},
		{"0m0h", "it is zero, a duration must be positive"},
		{"1ms", `unknown unit "ms"`},
		{"5x", `unknown unit "x"`},
		{"5µs", `unknown unit "µs"`},
		{"1H", `unknown unit "H": units are lower case, write "h"`},
		{"30", "number 30 has no unit"},
		{"5 5m", "number 5 has no unit"},
		{"h", `unit "h" has no number before it`},
		{"m5", `unit "m" has no number before it`},
		{"1h m", `unit "m" has no number before it`},
		{"-5m", "unexpected character '-' at offset 0: a duration cannot be negative"},
		{"1h-2m", "unexpected character '-' at offset 2"},
		{"1.5h", `unexpected character '.' at offset 1`},
		{"1h\t30m", `unexpected character '\t' at offset 2`},
		{"１s", `unexpected character '１' at offset 0`},
		{"99999999999999999999w", "too large"},
		{"9223372037s", "too large"},
		{"2562047h47m17s", "too large"},
		{"106752d", "too large"},
		{"99999999999999999999", "number 99999999999999999999 has no unit"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.in, got)
			}
			msg := err.Error()
			if !strings.Contains(msg, strconv.Quote(tt.in)) {
				t.Errorf("Parse(%q) error %q does not quote the input", tt.in, msg)
			}
			if !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("Parse(%q) error %q does not contain %q", tt.in, msg, tt.wantMsg)
			}
		})
	}
}

// TestParseAgreesWithAdmission checks that Parse accepts exactly the strings that the admission
// rules of v1alpha1.Duration accept, except those whose sum overflows.
func TestParseAgreesWithAdmission(t *testing.T) {
	syntax, positive := admissionRules(t)
	inputs := []string{
		"", " ", "0", "1", "s", "1s", " 1s", "1s ", " 1 s ", "1  s", "01s", "00s", "0s0m", "0s1m",
		"1h30m", "1 hour 30 min", "65m1h", "2 weeks", "1d", "1w2d3h4m5s", "1hour30minutes",
		"1sec", "1secs", "1second", "1seconds", "1min", "1mins", "1minute", "1minutes",
		"1hr", "1hrs", "1hour", "1hours", "1day", "1days", "1wk", "1wks", "1week", "1weeks",
		"1ms", "1mm", "1sm", "1m s", "1 m s", "1ss", "1secss", "1weekss", "1S", "1Min", "1 h 2",
		"1s1", "1d1", "h1", "m5", "5x", "-5m", "+5m", "1.5h", "1,5h", "1h,2m", "1h-", "1h\t2m",
		"\t1h", "1h\n", "1\u00a0h", "１s", "٣s", "5µs", "1h\x00", "\xff1h", "1h\xff",
		"99999999999999999999w", "9223372036s", "9223372037s", "106751d", "106752d",
		"2562047h47m16s", "2562047h47m17s", "1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w1w",
	}
	for _, s := range inputs {
		checkAgreement(t, syntax, positive, s)
	}
}

func FuzzParse(f *testing.F) {
	syntax, positive := admissionRules(f)
	for _, s := range []string{
		"1d", "1h30m", "1 hour 30 min", "65m1h", "30s", "2 weeks", " 5 m ", "", "0s", "0m0h",
		"1ms", "5x", "30", "h", "m5", "99999999999999999999w", "-5m", "1h\t2m", "１s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAgreement(t, syntax, positive, s)
	})
}

// checkAgreement fails t unless Parse(s) agrees with the admission rules and returns the sum
// that an independent computation finds, or errTooLarge when that sum overflows.
func checkAgreement(t *testing.T, syntax, positive *regexp.Regexp, s string) {
	t.Helper()
	got, err := Parse(s)
	if err != nil && !strings.Contains(err.Error(), strconv.Quote(s)) {
		t.Errorf("Parse(%q) error %q does not quote the input", s, err)
	}
	if !syntax.MatchString(s) || !positive.MatchString(s) {
		if err == nil {
			t.Errorf("Parse(%q) = %v, but admission rejects it", s, got)
		}
		return
	}
	want := nanoseconds(s)
	if want.Cmp(big.NewInt(math.MaxInt64)) > 0 {
		if !errors.Is(err, errTooLarge) {
			t.Errorf("Parse(%q) = %v, %v; want a too-large error, the sum is %vns", s, got, err, want)
		}
		return
	}
	if err != nil {
		t.Errorf("Parse(%q) error: %v, but admission accepts it", s, err)
		return
	}
	if got != time.Duration(want.Int64()) {
		t.Errorf("Parse(%q) = %v, want %vns", s, got, want)
	}
}

// admittedToken matches one number and unit of a string that the admission syntax rule accepts.
var admittedToken = regexp.MustCompile(`(\d+) *([a-z]+)`)

// nanoseconds computes, without overflow, the sum that a string accepted by the admission syntax
// rule denotes. The rule has already checked the unit names, so the first letter of a unit tells
// its length.
func nanoseconds(s string) *big.Int {
	lengths := map[byte]int64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 7 * 86400}
	total := new(big.Int)
	for _, m := range admittedToken.FindAllStringSubmatch(s, -1) {
		n, _ := new(big.Int).SetString(m[1], 10)
		n.Mul(n, big.NewInt(lengths[m[2][0]]*int64(time.Second)))
		total.Add(total, n)
	}
	return total
}

// admissionRules returns the two CEL matches() patterns of v1alpha1.Duration, read from its
// source so that this test follows any change to them. CEL's matches() uses RE2, as Go's regexp
// does.
func admissionRules(tb testing.TB) (syntax, positive *regexp.Regexp) {
	tb.Helper()
	src, err := os.ReadFile("../../api/v1alpha1/oaatgroup_types.go")
	if err != nil {
		tb.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.Contains(line, "XValidation") || !strings.Contains(line, "duration") {
			continue
		}
		// The rules that are one matches() each; the bound on the sum (a rule of its own, CEL
		// arithmetic) is compared with Parse on real API servers by tests/admission.
		m := regexp.MustCompile(`rule="self\.matches\('([^']*)'\)"`).FindStringSubmatch(line)
		if m != nil {
			patterns = append(patterns, m[1])
		}
	}
	if len(patterns) != 2 {
		tb.Fatalf("found %d matches() rules on v1alpha1.Duration, want 2: %q", len(patterns), patterns)
	}
	return regexp.MustCompile(patterns[0]), regexp.MustCompile(patterns[1])
}
