package statusview

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestRunState(t *testing.T) {
	tests := []struct {
		name   string
		status v1alpha1.OaatRunStatus
		want   string
	}{
		{name: "not seen yet", want: ""},
		{name: "phase only", status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending}, want: "Pending"},
		{name: "queued", status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunPending, Reason: string(v1alpha1.ReasonQueued), Message: "waits for item2"},
			want: "Pending Queued: waits for item2"},
		{name: "in progress", status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunInProgress, PodName: "g-item1-abc-7"},
			want: "InProgress (pod g-item1-abc-7)"},
		{name: "failed", status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunFailed, Reason: "Error", Message: "the pod failed", PodName: "g-item1-abc-7", ExitCode: ptr.To[int32](2)},
			want: "Failed Error: the pod failed (pod g-item1-abc-7, exit 2)"},
		{name: "rejected", status: v1alpha1.OaatRunStatus{Phase: v1alpha1.OaatRunRejected, Reason: string(v1alpha1.ReasonUnknownItem)},
			want: "Rejected UnknownItem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RunState(&v1alpha1.OaatRun{Status: tt.status}); got != tt.want {
				t.Errorf("RunState() = %q, want %q", got, tt.want)
			}
		})
	}
}
