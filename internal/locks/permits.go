package locks

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Problem returns why the group cannot start items because of spec.locks or spec.clusterLocks
// (a condition reason and its message), or an empty reason.
func Problem(group *v1alpha1.OaatGroup, in Input) (reason v1alpha1.Reason, text string) {
	var missing, missingCluster []string
	for _, name := range group.Spec.Locks {
		if in.Locks[name] == nil {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	if len(missing) > 0 {
		return v1alpha1.ReasonLockNotFound, fmt.Sprintf("OaatLock %s named by spec.locks not found in namespace %s",
			strings.Join(missing, ", "), group.Namespace)
	}
	var refused []string
	for _, name := range group.Spec.ClusterLocks {
		lock, _ := in.Locks[v1alpha1.ClusterLockKey(name)].(*v1alpha1.ClusterOaatLock)
		if lock == nil {
			missingCluster = append(missingCluster, fmt.Sprintf("%q", name))
			continue
		}
		switch err := Permits(lock, in.NamespaceLabels); {
		case !in.NamespaceRead:
			refused = append(refused, fmt.Sprintf("ClusterOaatLock %s: the labels of the namespace, which its spec.namespaceSelector must select, could not be read", lock.Name))
		case err != nil:
			refused = append(refused, err.Error())
		}
	}
	if len(missingCluster) > 0 {
		return v1alpha1.ReasonLockNotFound, fmt.Sprintf("ClusterOaatLock %s named by spec.clusterLocks not found",
			strings.Join(missingCluster, ", "))
	}
	if len(refused) > 0 {
		return v1alpha1.ReasonLockNotPermitted, fmt.Sprintf("namespace %s may not use %s", group.Namespace,
			strings.Join(refused, "; "))
	}
	var asked []string
	for _, key := range group.Spec.LockKeys() {
		if text := OptionProblem(in.Locks[key], group.Spec.LockOptionFor(key)); text != "" {
			asked = append(asked, text)
		}
	}
	if len(asked) > 0 {
		return v1alpha1.ReasonLockOptionRefused, "spec.lockOptions: " + strings.Join(asked, "; ")
	}
	return "", ""
}

// OptionProblem says why the lock does not let a run take it as the option asks (its LockBounds,
// or more slots than its capacity ever gives), empty when it does.
func OptionProblem(lock v1alpha1.Lock, o v1alpha1.LockOption) string {
	name, highest := v1alpha1.DescribeLocks([]string{lock.LockKey()}), HighestCapacity(lock)
	switch slots := max(int(o.Slots), 1); {
	case o.Mode == v1alpha1.LockExclusive && lock.Bounds().ExclusiveHolders != v1alpha1.ExclusiveAllowed:
		return name + " allows no exclusive holder (its spec.exclusiveHolders is not Allowed)"
	case o.Mode != v1alpha1.LockExclusive && slots > lock.Bounds().MaxSlotsOrOne():
		return fmt.Sprintf("%s allows at most %d slot(s) per run (its spec.maxSlotsPerRun); asked %d", name, lock.Bounds().MaxSlotsOrOne(), slots)
	case o.Mode != v1alpha1.LockExclusive && slots > highest:
		return fmt.Sprintf("%s never has more than %d slot(s) (spec.capacity and spec.capacitySchedule); asked %d", name, highest, slots)
	}
	return ""
}

// Allows reports whether the lock lets a run take it as the option asks (OptionProblem).
func Allows(lock v1alpha1.Lock, o v1alpha1.LockOption) bool { return OptionProblem(lock, o) == "" }

// Permits returns nil when the ClusterOaatLock's namespaceSelector selects a namespace of these
// labels, else why not. An absent selector selects no namespace and an empty one every
// namespace, as metav1.LabelSelectorAsSelector reads them; an invalid selector selects none.
func Permits(lock *v1alpha1.ClusterOaatLock, namespaceLabels map[string]string) error {
	sel := lock.Spec.NamespaceSelector
	if sel == nil {
		return fmt.Errorf("ClusterOaatLock %s: it has no spec.namespaceSelector, which selects no namespace", lock.Name)
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("ClusterOaatLock %s: its spec.namespaceSelector is invalid: %w", lock.Name, err)
	}
	if !selector.Matches(labels.Set(namespaceLabels)) {
		return fmt.Errorf("ClusterOaatLock %s: its spec.namespaceSelector (%s) does not select the namespace's labels", lock.Name, selector)
	}
	return nil
}
