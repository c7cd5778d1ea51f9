package leader

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func lease(holder string, renewed time.Duration) *coordinationv1.Lease {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "oaat-operator.oaat.io", Namespace: "system"},
		Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](15)},
	}
	if holder != "" {
		l.Spec.HolderIdentity = ptr.To(holder)
	}
	if renewed != 0 {
		l.Spec.RenewTime = &metav1.MicroTime{Time: t0.Add(renewed)}
	}
	return l
}

func TestHolds(t *testing.T) {
	tests := map[string]struct {
		lease *coordinationv1.Lease
		holds bool
	}{
		"held, just renewed":                   {lease: lease("me", -time.Second), holds: true},
		"held, renewed 9s ago":                 {lease: lease("me", -9*time.Second), holds: true},
		"held, renewed 10s ago: within margin": {lease: lease("me", -10*time.Second)},
		"held, expired (paused leader)":        {lease: lease("me", -time.Minute)},
		"another holder":                       {lease: lease("other", -time.Second)},
		"released":                             {lease: lease("", -time.Second)},
		"no renew time":                        {lease: &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("me")}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := Holds(tt.lease, "me", t0, DefaultMargin)
			if tt.holds != (err == nil) {
				t.Fatalf("Holds = %v, want holding %v", err, tt.holds)
			}
			if err != nil && !errors.Is(err, ErrNotLeader) {
				t.Fatalf("error %v does not wrap ErrNotLeader", err)
			}
		})
	}
}

func TestGuard(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	id := Identity{Lease: client.ObjectKey{Namespace: "system", Name: "oaat-operator.oaat.io"}, Holder: "me"}
	clock := clocktesting.NewFakePassiveClock(t0)

	var none *Guard
	if err := none.Check(context.Background()); err != nil {
		t.Fatalf("without leader election: %v", err)
	}
	g := &Guard{Reader: fake.NewClientBuilder().WithScheme(s).Build(), Identity: id, Clock: clock}
	if err := g.Check(context.Background()); err == nil || errors.Is(err, ErrNotLeader) {
		t.Fatalf("missing lease: %v, want a read error", err)
	}
	g.Reader = fake.NewClientBuilder().WithScheme(s).WithObjects(lease("me", -time.Second)).Build()
	if err := g.Check(context.Background()); err != nil {
		t.Fatalf("held lease: %v", err)
	}
	clock.SetTime(t0.Add(20 * time.Second)) // paused for longer than the lease
	if err := g.Check(context.Background()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("after a pause: %v", err)
	}
}
