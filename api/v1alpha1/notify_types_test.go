package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOutboxWorstSize: a full outbox (MaxPendingNotifications transitions, each field at its
// longest, of characters JSON escapes six bytes long) stays far below the 1.5 MiB an object may
// take in etcd, beside the status of a group of 1,000 items.
func TestOutboxWorstSize(t *testing.T) {
	const limit = 128 << 10
	worst := func(n int) string { return strings.Repeat("\x01", n) }
	out := NotificationsStatus{Next: 1<<63 - 1, Dropped: 1<<63 - 1}
	for i := range MaxPendingNotifications {
		out.Pending = append(out.Pending, Transition{
			Seq: 1<<62 + int64(i), Event: NotifyBreakerOpened, Item: worst(253),
			Time: metav1.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)), Reason: worst(MaxNotificationReason),
			Message: worst(MaxNotificationMessage),
		})
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a full outbox at its worst: %d bytes", len(b))
	if len(b) > limit {
		t.Errorf("a full outbox takes %d bytes, more than %d", len(b), limit)
	}
}
