package forecast

import (
	"testing"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestHeldAtStartDecidesEveryWaitReason walks every wait reason (v1alpha1.WaitReasons) through
// heldAtStart: a reason added to the API must be decided here, held (no success due) or not.
func TestHeldAtStartDecidesEveryWaitReason(t *testing.T) {
	held := map[v1alpha1.WaitReason]bool{
		v1alpha1.WaitRunning: false, v1alpha1.WaitSucceededRecently: false, v1alpha1.WaitCoolingOff: false,
		v1alpha1.WaitBlackout: false, v1alpha1.WaitOverrun: false, v1alpha1.WaitSuspended: false,
		v1alpha1.WaitParked: true, v1alpha1.WaitDone: true, v1alpha1.WaitLockHeld: false,
		v1alpha1.WaitRemoved: true, v1alpha1.WaitBreakerOpen: false, v1alpha1.WaitNextTick: true,
	}
	for _, reason := range v1alpha1.WaitReasons() {
		want, ok := held[reason]
		if !ok {
			t.Errorf("wait reason %q: decide whether it holds an item at the forecast's start", reason)
			continue
		}
		if got := heldAtStart(reason); got != want {
			t.Errorf("heldAtStart(%q) = %v, want %v", reason, got, want)
		}
	}
	if heldAtStart("") {
		t.Error("an item without a wait reason is held at the start")
	}
}
