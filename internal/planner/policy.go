package planner

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/groupspec"
)

// policy is the group's spec read for decisions: groupspec's Policy, the circuit breaker's and
// the verification's.
type policy struct {
	groupspec.Policy
	breaker *breakerPolicy // spec.circuitBreaker; nil without one
	verify  *verifyPolicy  // spec.verify; nil without one
}

// readPolicy reads the group's spec with groupspec.Read, spec.circuitBreaker and spec.verify; an
// error names
// the first field that cannot be used, and the policy holds all that could be read.
func readPolicy(g *v1alpha1.OaatGroup) (policy, error) {
	spec, first := groupspec.Read(g)
	p := policy{Policy: spec}
	if g.Spec.CircuitBreaker != nil {
		var err error
		if p.breaker, err = readBreakerPolicy(g.Spec.CircuitBreaker); err != nil && first == nil {
			first = err
		}
	}
	if g.Spec.Verify != nil {
		var err error
		if p.verify, err = readVerifyPolicy(g.Spec.Verify); err != nil && first == nil {
			first = err
		}
	}
	return p, first
}

// parseDuration parses an optional duration of the spec at the path field; empty is zero.
var parseDuration = groupspec.Duration

// classify applies spec.exitCodes to a failed pod's non-zero exit codes: whether they all count
// as success, and the first that forbids a retry.
func (p policy) classify(codes []int32) (success bool, doNotRetry *int32) {
	for _, code := range codes {
		if slices.Contains(p.ExitCodes.DoNotRetry, code) {
			return false, &code
		}
	}
	for _, code := range codes {
		if !slices.Contains(p.ExitCodes.Success, code) {
			return false, nil
		}
	}
	return len(codes) > 0, nil
}

// nonZeroExitCodes are the exit codes of the terminated containers that are not 0.
func nonZeroExitCodes(statuses []corev1.ContainerStatus) []int32 {
	var codes []int32
	for _, s := range statuses {
		if term := s.State.Terminated; term != nil && term.ExitCode != 0 {
			codes = append(codes, term.ExitCode)
		}
	}
	return codes
}
