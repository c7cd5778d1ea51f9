package planner

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
