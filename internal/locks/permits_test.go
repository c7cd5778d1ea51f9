package locks

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

var selected = map[string]string{"team": "backup"}

// TestPermits proves how a ClusterOaatLock's namespaceSelector permits a namespace: an absent
// selector none, an empty one every namespace, an invalid one none, and otherwise by its labels.
func TestPermits(t *testing.T) {
	tests := []struct {
		name     string
		selector *metav1.LabelSelector
		labels   map[string]string
		want     string // a part of the refusal, empty when permitted
	}{
		{name: "absent selector selects no namespace", labels: selected, want: "selects no namespace"},
		{name: "empty selector selects every namespace", selector: &metav1.LabelSelector{}},
		{name: "empty selector selects a namespace without labels", selector: &metav1.LabelSelector{}, labels: map[string]string{}},
		{name: "matching labels", selector: &metav1.LabelSelector{MatchLabels: selected}, labels: map[string]string{"team": "backup", "x": "y"}},
		{name: "other labels", selector: &metav1.LabelSelector{MatchLabels: selected}, labels: map[string]string{"team": "web"}, want: "does not select"},
		{name: "no labels", selector: &metav1.LabelSelector{MatchLabels: selected}, want: "does not select"},
		{name: "expression NotIn", labels: map[string]string{"team": "web"}, selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"backup"}}}}},
		{name: "invalid selector selects none", labels: selected, want: "is invalid", selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lock := clusterLock("db", 1)
			lock.Spec.NamespaceSelector = tt.selector
			err := Permits(lock, tt.labels)
			if tt.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestProblem proves the reason and message that keep a group from its locks: a missing OaatLock
// or ClusterOaatLock, a namespace the ClusterOaatLock does not select, or whose labels could not be
// read (fail closed); none when all is well.
func TestProblem(t *testing.T) {
	g := group("a", []string{"nas"}, "", nil)
	g.Spec.ClusterLocks = []string{"db"}
	tests := []struct {
		name       string
		in         Input
		wantReason v1alpha1.Reason
		wantText   string
	}{
		{name: "both exist, namespace selected", wantReason: "",
			in: Input{Locks: map[string]v1alpha1.Lock{"nas": lock("nas", 1), "ClusterOaatLock/db": clusterLock("db", 1)},
				NamespaceLabels: selected, NamespaceRead: true}},
		{name: "OaatLock missing", wantReason: v1alpha1.ReasonLockNotFound,
			wantText: `OaatLock "nas" named by spec.locks not found in namespace ns`,
			in:       Input{Locks: map[string]v1alpha1.Lock{"ClusterOaatLock/db": clusterLock("db", 1)}, NamespaceLabels: selected, NamespaceRead: true}},
		{name: "ClusterOaatLock missing", wantReason: v1alpha1.ReasonLockNotFound,
			wantText: `ClusterOaatLock "db" named by spec.clusterLocks not found`,
			in:       Input{Locks: map[string]v1alpha1.Lock{"nas": lock("nas", 1)}, NamespaceLabels: selected, NamespaceRead: true}},
		{name: "namespace not selected", wantReason: v1alpha1.ReasonLockNotPermitted,
			wantText: "namespace ns may not use ClusterOaatLock db: its spec.namespaceSelector (team=backup) does not select the namespace's labels",
			in: Input{Locks: map[string]v1alpha1.Lock{"nas": lock("nas", 1), "ClusterOaatLock/db": clusterLock("db", 1)},
				NamespaceLabels: map[string]string{"team": "web"}, NamespaceRead: true}},
		{name: "namespace unread fails closed", wantReason: v1alpha1.ReasonLockNotPermitted,
			wantText: "namespace ns may not use ClusterOaatLock db: the labels of the namespace, which its spec.namespaceSelector must select, could not be read",
			in:       Input{Locks: map[string]v1alpha1.Lock{"nas": lock("nas", 1), "ClusterOaatLock/db": clusterLock("db", 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, text := Problem(&g, tt.in)
			if reason != tt.wantReason || text != tt.wantText {
				t.Fatalf("Problem = %q, %q; want %q, %q", reason, text, tt.wantReason, tt.wantText)
			}
		})
	}
}

// TestProblemLockOptions proves that a group asking of its locks more than they allow
// (spec.lockOptions against the lock's spec.exclusiveHolders and spec.maxSlotsPerRun), or more slots
// than a lock ever has, is refused with reason LockOptionRefused naming each lock and why; what a
// lock allows is no problem.
func TestProblemLockOptions(t *testing.T) {
	g := group("a", []string{"nas"}, "", nil)
	g.Spec.ClusterLocks = []string{"db"}
	locks := func(nas *v1alpha1.OaatLock) Input {
		db := clusterLock("db", 4)
		db.Spec.ExclusiveHolders = v1alpha1.ExclusiveAllowed
		return Input{Locks: map[string]v1alpha1.Lock{"nas": nas, "ClusterOaatLock/db": db}, NamespaceLabels: selected, NamespaceRead: true}
	}
	for _, tt := range []struct {
		name     string
		options  []v1alpha1.LockOption
		nas      *v1alpha1.OaatLock
		wantText string
	}{
		{name: "exclusive where allowed, no option on nas", options: []v1alpha1.LockOption{{Lock: "ClusterOaatLock/db", Mode: v1alpha1.LockExclusive}},
			nas: lock("nas", 1)},
		{name: "exclusive where not allowed", options: []v1alpha1.LockOption{{Lock: "nas", Mode: v1alpha1.LockExclusive}},
			nas: lock("nas", 1), wantText: "spec.lockOptions: OaatLock nas allows no exclusive holder (its spec.exclusiveHolders is not Allowed)"},
		{name: "more slots than allowed per run, twice", options: []v1alpha1.LockOption{{Lock: "nas", Slots: 2}, {Lock: "ClusterOaatLock/db", Slots: 2}},
			nas: lock("nas", 3), wantText: "spec.lockOptions: OaatLock nas allows at most 1 slot(s) per run (its spec.maxSlotsPerRun); asked 2; " +
				"ClusterOaatLock db allows at most 1 slot(s) per run (its spec.maxSlotsPerRun); asked 2"},
		{name: "more slots than the lock ever has", options: []v1alpha1.LockOption{{Lock: "nas", Slots: 3}},
			nas:      lockOf(bounded(2), func(l *v1alpha1.OaatLock) { l.Spec.CapacitySchedule = windows(window("22:00", "06:00", 1)) }),
			wantText: "spec.lockOptions: OaatLock nas never has more than 2 slot(s) (spec.capacity and spec.capacitySchedule); asked 3"},
		{name: "slots within the bound and a night window's capacity", options: []v1alpha1.LockOption{{Lock: "nas", Slots: 3}},
			nas: lockOf(bounded(2), func(l *v1alpha1.OaatLock) { l.Spec.CapacitySchedule = windows(window("22:00", "06:00", 4)) })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g.Spec.LockOptions = tt.options
			reason, text := Problem(&g, locks(tt.nas))
			wantReason := v1alpha1.ReasonLockOptionRefused
			if tt.wantText == "" {
				wantReason = ""
			}
			if reason != wantReason || text != tt.wantText {
				t.Fatalf("Problem = %q, %q; want %q, %q", reason, text, wantReason, tt.wantText)
			}
		})
	}
}
