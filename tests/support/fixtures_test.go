package support

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestGroupIsTheBuildersGroupNamedWithoutServerFields(t *testing.T) {
	got := Group("team", "photos", "backup", "a", "b").Locks("nas").ClusterLocks("db").FailureCoolOff("1h").Obj()
	want := &v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "photos", Namespace: "team"},
		Spec: v1alpha1.OaatGroupSpec{
			OaatType: "backup", OaatItems: []string{"a", "b"}, Frequency: "1h", FailureCoolOff: "1h",
			Locks: []string{"nas"}, ClusterLocks: []string{"db"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("group (-want +got):\n%s", diff)
	}
}

func TestKwokTypeScriptsItsPodsForKwokNodes(t *testing.T) {
	got := KwokType("team", "quick", "2s", 75)
	want := &v1alpha1.OaatType{
		ObjectMeta: metav1.ObjectMeta{Name: "quick", Namespace: "team"},
		Spec: v1alpha1.OaatTypeSpec{Type: v1alpha1.OaatTypePod, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"oaat.io/test-duration": "2s", "oaat.io/test-exit-code": "75"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "main", Image: "example.invalid/item:latest",
					Command: []string{"sh", "-c", `echo processing "$1"`, "--", "{{oaat_item}}"},
				}},
				Tolerations:  []corev1.Toleration{KwokToleration()},
				NodeSelector: map[string]string{"type": "kwok"},
			},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OaatType (-want +got):\n%s", diff)
	}
}

func TestNewSharedBreakerIsOneLockAndTwoGroupsNamingIt(t *testing.T) {
	s := NewSharedBreaker("team", "nas-backup")
	lock := &v1alpha1.OaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: "nas", Namespace: "team"},
		Spec:       v1alpha1.OaatLockSpec{Capacity: 2, CircuitBreaker: v1alpha1.LockBreakerShared},
	}
	group := func(name string, items ...string) *v1alpha1.OaatGroup {
		return &v1alpha1.OaatGroup{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
			Spec: v1alpha1.OaatGroupSpec{
				OaatType: "nas-backup", OaatItems: items, Frequency: "1h", FailureCoolOff: "1h", Locks: []string{"nas"},
				CircuitBreaker: &v1alpha1.CircuitBreaker{
					ConsecutiveItemFailures: 2, ExitCodes: []int32{75}, ProbeInterval: "2s", MaxProbeInterval: "4s",
				},
			},
		}
	}
	want := SharedBreaker{
		Lock:    lock,
		Items:   map[string][]string{"photos": {"a", "b", "c"}, "music": {"x", "y"}},
		Objects: []client.Object{lock, group("photos", "a", "b", "c"), group("music", "x", "y")},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("shared breaker (-want +got):\n%s", diff)
	}
	if s.Objects[0] != s.Lock {
		t.Errorf("Objects[0] is not the Lock itself: a spec that reads the lock's key reads another object")
	}
}

func TestClusterLockSelectsTheLabelledNamespaces(t *testing.T) {
	got := ClusterLock("db", 1, map[string]string{"team": "backup"})
	want := &v1alpha1.ClusterOaatLock{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: v1alpha1.ClusterOaatLockSpec{
			Capacity: 1, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "backup"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterOaatLock (-want +got):\n%s", diff)
	}
}
