package perfkit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// Sample is one sample of the Prometheus text format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples are the samples of one scrape.
type Samples []Sample

// ParseMetrics reads the Prometheus text exposition format: comment lines are skipped, label
// values may hold escaped quotes, backslashes and newlines, a trailing timestamp is ignored.
func ParseMetrics(r io.Reader) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("metrics line without a value: %q", line)
	}
	s.Name, line = line[:end], line[end:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, ", ")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, `="`)
			if eq < 0 {
				return s, fmt.Errorf("malformed labels in metrics line of %s", s.Name)
			}
			name := line[:eq]
			value, rest, err := unquote(line[eq+1:])
			if err != nil {
				return s, fmt.Errorf("metric %s label %s: %w", s.Name, name, err)
			}
			s.Labels[name], line = value, rest
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("metric %s without a value", s.Name)
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("metric %s: %w", s.Name, err)
	}
	s.Value = v
	return s, nil
}

// unquote reads the quoted label value at the start of s and returns it and what follows it.
func unquote(s string) (string, string, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			i++
			if i == len(s) {
				return "", "", fmt.Errorf("unterminated value")
			}
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("unterminated value")
}

// Sum adds the values of the samples named name whose labels match every pair of match.
func (ss Samples) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, s := range ss {
		if s.Name == name && matches(s.Labels, match) {
			total += s.Value
		}
	}
	return total
}

func matches(labels, match map[string]string) bool {
	for k, v := range match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// ScrapeAPIServer reads the API server's own /metrics (the admin may read it).
func ScrapeAPIServer(ctx context.Context, clientset kubernetes.Interface) (Samples, error) {
	raw, err := clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's /metrics: %w", err)
	}
	return ParseMetrics(strings.NewReader(string(raw)))
}

// BucketQuantile returns the upper bound of the histogram bucket that holds the q-th quantile
// (0 < q <= 1) of the buckets named name (cumulative, with an "le" label) whose labels match every
// pair of match, summed over the other labels; 0 when the histogram is empty, +Inf when only the
// last bucket holds it.
func (ss Samples) BucketQuantile(name string, match map[string]string, q float64) float64 {
	counts := map[float64]float64{}
	for _, s := range ss {
		if s.Name != name || !matches(s.Labels, match) {
			continue
		}
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			continue
		}
		counts[le] += s.Value
	}
	bounds := make([]float64, 0, len(counts))
	for le := range counts {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	if len(bounds) == 0 || counts[bounds[len(bounds)-1]] == 0 {
		return 0
	}
	want := q * counts[bounds[len(bounds)-1]]
	for _, le := range bounds {
		if counts[le] >= want {
			return le
		}
	}
	return math.Inf(1)
}
