package history

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// DefaultRetention is how long the record of a deleted group is kept unless the manager is told
// otherwise (--history-retention).
const DefaultRetention = 7 * 24 * time.Hour

// MaxItems is the most item entries a record holds (the CRD's MaxItems): a group resolves at most
// 1000 items, and its status may hold a few more, of removed items whose pods remain; those are
// the ones left out.
const MaxItems = 1000

// Record is the history record of a group being deleted, written at now and kept for retention.
// Only the entries of items that have run are kept: the others have nothing to remember.
func Record(group *v1alpha1.OaatGroup, now time.Time, retention time.Duration) *v1alpha1.OaatGroupHistory {
	deletedAt := metav1.NewTime(now.Truncate(time.Second))
	record := &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: group.Namespace, Name: group.Name,
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}},
		Spec: v1alpha1.OaatGroupHistorySpec{
			GroupUID:  string(group.UID),
			OaatType:  group.Spec.OaatType,
			DeletedAt: deletedAt,
			ExpiresAt: metav1.NewTime(deletedAt.Add(retention)),
			RunCount:  group.Status.RunCount,
		},
	}
	for _, it := range group.Status.Items {
		if len(record.Spec.Items) == MaxItems {
			break
		}
		if hasHistory(&it) {
			record.Spec.Items = append(record.Spec.Items, toHistory(&it))
		}
	}
	return record
}

// Expired reports whether the record is of no use at now.
func Expired(record *v1alpha1.OaatGroupHistory, now time.Time) bool {
	return !now.Before(record.Spec.ExpiresAt.Time)
}

// hasHistory reports whether an item's status entry says anything of its runs.
func hasHistory(it *v1alpha1.ItemStatus) bool {
	return it.LastStarted != nil || it.LastSuccess != nil || it.LastFailure != nil
}

func toHistory(it *v1alpha1.ItemStatus) v1alpha1.ItemHistory {
	return v1alpha1.ItemHistory{
		Name:             it.Name,
		LastSuccess:      it.LastSuccess.DeepCopy(),
		LastFailure:      it.LastFailure.DeepCopy(),
		FailureCount:     it.FailureCount,
		LastStarted:      it.LastStarted.DeepCopy(),
		LastExitCode:     copyInt32(it.LastExitCode),
		LastReason:       it.LastReason,
		RecentRunSeconds: append([]int64(nil), it.RecentRunSeconds...),

		LastVerified:          it.LastVerified.DeepCopy(),
		VerifiedRunFinishedAt: it.VerifiedRunFinishedAt.DeepCopy(),
		LastVerifyFailure:     it.LastVerifyFailure.DeepCopy(),
	}
}

// fromHistory is the status entry of item made of a record's entry of (maybe) another name.
func fromHistory(item string, h *v1alpha1.ItemHistory) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{
		Name:             item,
		LastSuccess:      h.LastSuccess.DeepCopy(),
		LastFailure:      h.LastFailure.DeepCopy(),
		FailureCount:     h.FailureCount,
		LastStarted:      h.LastStarted.DeepCopy(),
		LastExitCode:     copyInt32(h.LastExitCode),
		LastReason:       h.LastReason,
		RecentRunSeconds: append([]int64(nil), h.RecentRunSeconds...),

		LastVerified:          h.LastVerified.DeepCopy(),
		VerifiedRunFinishedAt: h.VerifiedRunFinishedAt.DeepCopy(),
		LastVerifyFailure:     h.LastVerifyFailure.DeepCopy(),
	}
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
