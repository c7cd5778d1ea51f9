package locks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// t0 is the fixed time of the tests.
var t0 = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

// lock is an OaatLock of namespace ns.
func lock(name string, capacity int32, holders ...v1alpha1.LockHolder) *v1alpha1.OaatLock {
	return &v1alpha1.OaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       v1alpha1.OaatLockSpec{Capacity: capacity},
		Status:     v1alpha1.OaatLockStatus{Holders: holders},
	}
}

// clusterLock is a ClusterOaatLock selecting the namespaces labelled team=backup.
func clusterLock(name string, capacity int32, holders ...v1alpha1.LockHolder) *v1alpha1.ClusterOaatLock {
	return &v1alpha1.ClusterOaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ClusterOaatLockSpec{Capacity: capacity,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "backup"}}},
		Status: v1alpha1.ClusterOaatLockStatus{Holders: holders},
	}
}

// holder is the slot of the run of pod of a group of namespace ns (as an OaatLock stores it).
func holder(group, pod string) v1alpha1.LockHolder {
	return v1alpha1.LockHolder{Group: group, GroupUID: group + "-uid", Item: "x", Pod: pod, Since: metav1.NewTime(t0)}
}

// group is a group of namespace ns naming the locks, with its current run's pod (none when
// empty) and waiting since the given offset from t0 (not waiting when nil).
func group(name string, lockNames []string, pod string, waitingSince *time.Duration) v1alpha1.OaatGroup {
	g := v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid")},
		Spec:       v1alpha1.OaatGroupSpec{Locks: lockNames},
	}
	if pod != "" {
		g.Status.CurrentRun = &v1alpha1.CurrentRun{Item: "x", PodName: pod, StartedAt: metav1.NewTime(t0)}
	}
	if waitingSince != nil {
		g.Status.LockWait = &v1alpha1.LockWait{Since: metav1.NewTime(t0.Add(*waitingSince)), Locks: lockNames}
	}
	return g
}

// after is a pointer to an offset from t0.
func after(d time.Duration) *time.Duration { return &d }
