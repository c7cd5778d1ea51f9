package groupspec

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestFailureCounting proves which failures count towards the breaker, and so throttle an
// adaptive lock: every failure without a breaker or without its lists; else those they list;
// never one of spec.exitCodes.doNotRetry.
func TestFailureCounting(t *testing.T) {
	listed := &v1alpha1.OaatGroupSpec{CircuitBreaker: &v1alpha1.CircuitBreaker{ExitCodes: []int32{75}, Reasons: []string{"DeadlineExceeded"}},
		ExitCodes: &v1alpha1.ExitCodes{DoNotRetry: []int32{3}}}
	for _, tc := range []struct {
		name   string
		spec   *v1alpha1.OaatGroupSpec
		code   *int32
		reason string
		want   bool
	}{
		{"no breaker: any failure", &v1alpha1.OaatGroupSpec{}, ptr.To[int32](1), "Error", true},
		{"a breaker listing nothing: any failure", &v1alpha1.OaatGroupSpec{CircuitBreaker: &v1alpha1.CircuitBreaker{}}, nil, "PodNotFound", true},
		{"a listed exit code", listed, ptr.To[int32](75), "Error", true},
		{"a listed reason", listed, nil, "DeadlineExceeded", true},
		{"neither listed: the item's own", listed, ptr.To[int32](1), "Error", false},
		{"doNotRetry, even without a breaker", &v1alpha1.OaatGroupSpec{ExitCodes: &v1alpha1.ExitCodes{DoNotRetry: []int32{3}}}, ptr.To[int32](3), "Error", false},
	} {
		if got := CountingOf(tc.spec).Counts(tc.code, tc.reason); got != tc.want {
			t.Errorf("%s: counts %v, want %v", tc.name, got, tc.want)
		}
	}
}
