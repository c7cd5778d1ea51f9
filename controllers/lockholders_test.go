package controllers

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// The unit tests of issue 25: a lock's holders follow the group's live runs, whatever refuses or
// re-creates what.

// refuseStatusOf makes the API server refuse, as invalid, every status of group that would start
// a run (its planned status names a current run), and counts the status writes of each lock.
func refuseStatusOf(group string, lockWrites map[string]int) interceptor.Funcs {
	return interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		switch o := obj.(type) {
		case *v1alpha1.OaatGroup:
			if o.Name == group && o.Status.CurrentRun != nil {
				return apierrors.NewInvalid(groupKind, o.Name, field.ErrorList{field.Invalid(field.NewPath("status", "currentRun"), "", "no")})
			}
		case v1alpha1.Lock:
			lockWrites[o.GetName()]++
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
}

// Defects 1 and 2: a group whose status the API server refuses gives back the slot it took for
// the run (another group naming the lock then starts), and, while the refusal lasts, does not
// take it again at every wake-up: no lock write until its retry wait is over.
func TestRefusedStatusGivesBackTheSlot(t *testing.T) {
	lockWrites := map[string]int{}
	g, h := testGroup("g", "a"), testGroup("h", "b")
	g.Spec.Locks, h.Spec.Locks = []string{"db"}, []string{"db"}
	server := newFakeClient(t, refuseStatusOf("g", lockWrites), testType(), g, h, testLock("db", 1))
	r := newTestReconciler(server, server)

	if _, err := r.reconcile(t, "g"); err != nil {
		t.Fatalf("g's pass: %v", err)
	}
	if holders := getLock(t, server, "db").Status.Holders; len(holders) != 0 {
		t.Fatalf("db keeps holders %+v after g's status was refused", holders)
	}
	// The lock's writes wake g (it held a slot): passes within the retry wait take no slot.
	writes := lockWrites["db"]
	for range 3 {
		r.clock.Step(time.Second)
		if _, err := r.reconcile(t, "g"); err != nil {
			t.Fatalf("g's pass: %v", err)
		}
	}
	if n := lockWrites["db"] - writes; n != 0 {
		t.Errorf("%d writes of db in 3 s of refusals: each pass took the slot again", n)
	}
	if _, err := r.reconcile(t, "h"); err != nil {
		t.Fatalf("h's pass: %v", err)
	}
	if cr := getGroup(t, server, "h").Status.CurrentRun; cr == nil {
		t.Errorf("h did not start: db's slot %+v", getLock(t, server, "db").Status.Holders)
	}
}
