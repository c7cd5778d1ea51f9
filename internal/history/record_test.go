package history

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestRecord(t *testing.T) {
	a, b := succeeded("/srv/a", -3*time.Hour), failed("/srv/b", -2*time.Hour)
	g := group("old-uid", "/srv/a", "/srv/b", "/srv/never")
	g.Status.RunCount = 42
	g.Status.Items = []v1alpha1.ItemStatus{a, b, {Name: "/srv/never", WaitReason: v1alpha1.WaitSucceededRecently}}

	got := Record(g, t0.Add(1500*time.Millisecond), 48*time.Hour)
	want := &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backups",
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}},
		Spec: v1alpha1.OaatGroupHistorySpec{
			GroupUID: "old-uid", OaatType: "sleeper", RunCount: 42,
			DeletedAt: *at(time.Second), ExpiresAt: *at(48*time.Hour + time.Second),
			Items: []v1alpha1.ItemHistory{historyOf(a), historyOf(b)},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Record (-want +got):\n%s", diff)
	}
}

func TestRecordKeepsAtMostMaxItems(t *testing.T) {
	g := group("old-uid")
	for i := range MaxItems + 5 {
		g.Status.Items = append(g.Status.Items, succeeded(fmt.Sprintf("item-%04d", i), -time.Hour))
	}
	got := Record(g, t0, time.Hour).Spec.Items
	if len(got) != MaxItems || got[0].Name != "item-0000" || got[MaxItems-1].Name != fmt.Sprintf("item-%04d", MaxItems-1) {
		t.Fatalf("%d items, first %s, last %s; want the first %d", len(got), got[0].Name, got[len(got)-1].Name, MaxItems)
	}
}

func TestExpired(t *testing.T) {
	r := record()
	for _, c := range []struct {
		now  time.Time
		want bool
	}{
		{t0, false},
		{t0.Add(DefaultRetention - time.Nanosecond), false},
		{t0.Add(DefaultRetention), true},
		{t0.Add(DefaultRetention + time.Hour), true},
	} {
		if got := Expired(r, c.now); got != c.want {
			t.Errorf("Expired at %s = %v, want %v", c.now, got, c.want)
		}
	}
}
