package history

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// t0 is the fixed clock of the tests.
var (
	t0 = builders.T0
	at = builders.At
)

// group is the builders' group (of the namespace ns, named backups, of the OaatType sleeper) with
// the UID.
func group(uid string, items ...string) *v1alpha1.OaatGroup {
	return builders.Group(items...).UID(uid).Obj()
}

// succeeded is the status entry of an item that started at start and succeeded a minute later.
func succeeded(name string, start time.Duration) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{Name: name, LastStarted: at(start), LastSuccess: at(start + time.Minute),
		LastExitCode: ptr.To[int32](0), LastReason: "Completed", LastPodName: "backups-" + name,
		RecentRunSeconds: []int64{60}, NextEligibleAt: at(start + time.Hour), WaitReason: v1alpha1.WaitSucceededRecently,
		LastVerified: at(start + 2*time.Minute), VerifiedRunFinishedAt: at(start + time.Minute)}
}

// failed is the status entry of an item that started at start and failed twice, the last time a
// minute later.
func failed(name string, start time.Duration) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{Name: name, LastStarted: at(start), LastFailure: at(start + time.Minute), FailureCount: 2,
		LastExitCode: ptr.To[int32](3), LastReason: "Error", LastPodName: "backups-" + name, ParkedGeneration: 4,
		LastVerifyFailure: at(start - time.Hour)}
}

// historyOf is the record's entry of a status entry.
func historyOf(it v1alpha1.ItemStatus) v1alpha1.ItemHistory {
	return v1alpha1.ItemHistory{Name: it.Name, LastSuccess: it.LastSuccess, LastFailure: it.LastFailure,
		FailureCount: it.FailureCount, LastStarted: it.LastStarted, LastExitCode: it.LastExitCode,
		LastReason: it.LastReason, RecentRunSeconds: it.RecentRunSeconds,
		LastVerified: it.LastVerified, VerifiedRunFinishedAt: it.VerifiedRunFinishedAt, LastVerifyFailure: it.LastVerifyFailure}
}

// adopted is the status entry a new group makes of a record's entry, under name.
func adopted(name string, it v1alpha1.ItemStatus) v1alpha1.ItemStatus {
	return v1alpha1.ItemStatus{Name: name, LastSuccess: it.LastSuccess, LastFailure: it.LastFailure,
		FailureCount: it.FailureCount, LastStarted: it.LastStarted, LastExitCode: it.LastExitCode,
		LastReason: it.LastReason, RecentRunSeconds: it.RecentRunSeconds,
		LastVerified: it.LastVerified, VerifiedRunFinishedAt: it.VerifiedRunFinishedAt, LastVerifyFailure: it.LastVerifyFailure}
}

// record is the record of the deleted group "old-uid", deleted at t0, expiring a week later.
func record(items ...v1alpha1.ItemStatus) *v1alpha1.OaatGroupHistory {
	r := &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backups"},
		Spec: v1alpha1.OaatGroupHistorySpec{GroupUID: "old-uid", OaatType: "sleeper",
			DeletedAt: *at(0), ExpiresAt: *at(DefaultRetention), RunCount: 42},
	}
	for _, it := range items {
		r.Spec.Items = append(r.Spec.Items, historyOf(it))
	}
	return r
}
