package locks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// TestAdoptedAt proves that a ClusterOaatLock begins to grant to an installation of some
// namespaces the window after its creation, and that an OaatLock, or any lock reviewed by an
// installation of all namespaces, grants at once.
func TestAdoptedAt(t *testing.T) {
	created := func(l v1alpha1.Lock) v1alpha1.Lock {
		l.SetCreationTimestamp(metav1.NewTime(t0))
		return l
	}
	tests := []struct {
		name         string
		lock         v1alpha1.Lock
		installation string
		want         time.Time
	}{
		{name: "ClusterOaatLock, installation of some namespaces", lock: created(clusterLock("db", 1)), installation: "team-a",
			want: t0.Add(DefaultAdoptionWindow)},
		{name: "ClusterOaatLock, installation of all namespaces", lock: created(clusterLock("db", 1))},
		{name: "OaatLock, installation of some namespaces", lock: created(lock("nas", 1)), installation: "ns"},
	}
	for _, tt := range tests {
		if got := AdoptedAt(tt.lock, tt.installation, DefaultAdoptionWindow); !got.Equal(tt.want) {
			t.Errorf("%s: AdoptedAt = %v, want %v", tt.name, got, tt.want)
		}
	}
}
