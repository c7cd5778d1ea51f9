package v1alpha1

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// worstGroup is a group of 1,000 items of 253 characters (paths: characters JSON keeps as they
// are), applied by a user (managedFields lists every item), with every field of its status at its
// longest (a container's reason taken as 128 bytes, the longest spec.circuitBreaker.reasons
// takes) and a full outbox; with verify, its verification record too, and a pending verification
// of 1 KiB.
func worstGroup(verify bool) OaatGroup {
	long := strings.Repeat
	when := metav1.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))
	code, huge := int32(-1<<31), int64(1<<63-1)
	g := OaatGroup{ObjectMeta: metav1.ObjectMeta{Name: long("g", 253), Namespace: long("n", 63)},
		Spec: OaatGroupSpec{OaatType: long("t", 253)}}
	st := &g.Status
	st.RunCount, st.ItemCount = huge, 1000
	for i := range 1000 {
		item := long("/", 249) + fmt.Sprintf("%04d", i)
		g.Spec.OaatItems = append(g.Spec.OaatItems, item)
		it := ItemStatus{
			Name: item, LastSuccess: &when, LastFailure: &when, FailureCount: 1<<31 - 1, LastStarted: &when,
			LastExitCode: &code, LastReason: long("R", 128), LastPodName: long("p", 63),
			RecentRunSeconds: []int64{huge, huge, huge, huge, huge}, ParkedGeneration: huge, NextEligibleAt: &when,
			WaitReason: WaitSucceededRecently,
		}
		if verify {
			it.LastVerified, it.VerifiedRunFinishedAt, it.LastVerifyFailure = &when, &when, &when
		}
		st.Items = append(st.Items, it)
	}
	st.CurrentRun = &CurrentRun{Item: g.Spec.OaatItems[0], PodName: long("p", 63), StartedAt: when}
	st.Notifications = &NotificationsStatus{Next: huge, Dropped: huge}
	for i := range MaxPendingNotifications {
		st.Notifications.Pending = append(st.Notifications.Pending, Transition{Seq: huge - int64(i), Event: NotifyVerificationFailed,
			Item: g.Spec.OaatItems[i], Time: when, Reason: long("R", MaxNotificationReason), Message: long("m", MaxNotificationMessage)})
	}
	g.ManagedFields = []metav1.ManagedFieldsEntry{appliedSpec(g.Spec.OaatItems, verify), writtenStatus()}
	if verify {
		g.Spec.Verify = &Verify{OaatType: long("v", 253), Every: "1000w", OnFailure: VerifyRerunItem}
		st.CurrentRun.Purpose = PurposeVerify
		st.PendingVerification = &PendingVerification{Item: g.Spec.OaatItems[0], PodName: long("p", 63), FinishedAt: when,
			ExitCode: &code, Result: long("r", MaxSourceResult)}
	}
	return g
}

// appliedSpec is the managedFields entry of a user's server-side apply of a spec with items: a
// set, whose every value the entry lists.
func appliedSpec(items []string, verify bool) metav1.ManagedFieldsEntry {
	values := map[string]any{".": map[string]any{}}
	for _, item := range items {
		v, _ := json.Marshal(item)
		values["v:"+string(v)] = map[string]any{}
	}
	spec := map[string]any{"f:oaatItems": values, "f:oaatType": map[string]any{}}
	if verify {
		spec["f:verify"] = map[string]any{"f:oaatType": map[string]any{}, "f:every": map[string]any{}, "f:onFailure": map[string]any{}}
	}
	raw, _ := json.Marshal(map[string]any{"f:spec": spec})
	when := metav1.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))
	return metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "oaat.io/v1alpha1",
		Time: &when, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}
}

// writtenStatus is the managedFields entry of the operator's status updates: status.items is
// atomic, so the entry names the list once, whatever it holds.
func writtenStatus() metav1.ManagedFieldsEntry {
	raw, _ := json.Marshal(map[string]any{"f:status": map[string]any{"f:items": map[string]any{}}})
	when := metav1.NewTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC))
	return metav1.ManagedFieldsEntry{Manager: "oaat-operator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "oaat.io/v1alpha1",
		Time: &when, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw)), Subresource: "status"}
}

// TestGroupWorstSize: the worst group of 1,000 items, with verifications, stays below the 1.5 MiB
// an object may take in etcd; it says what verifications add.
func TestGroupWorstSize(t *testing.T) {
	const etcdLimit = 1536 << 10
	size := func(verify bool) int {
		b, err := json.Marshal(worstGroup(verify))
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	without, with := size(false), size(true)
	t.Logf("a group of 1,000 items at its worst: %d bytes of %d (%.1f %%); verifications add %d",
		with, etcdLimit, 100*float64(with)/etcdLimit, with-without)
	if with > etcdLimit {
		t.Errorf("a group of 1,000 items at its worst takes %d bytes, more than %d", with, etcdLimit)
	}
}
