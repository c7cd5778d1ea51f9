package controllers

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/planner"
)

// Field indexes of the locks: OaatGroups by the OaatLocks they name, OaatLocks by the groups
// holding a slot of them.
const (
	lockIndex       = "spec.locks"
	lockHolderIndex = "status.holders.group"
)

// gatherLocks reads, from the cache, the OaatLocks the group names or holds a slot of, and the
// other groups that wait for one of the locks it names. A group that names no lock and holds none
// costs one indexed cache read.
func (r *OaatGroupReconciler) gatherLocks(ctx context.Context, group *v1alpha1.OaatGroup) (planner.LockInput, error) {
	in := planner.LockInput{Locks: map[string]*v1alpha1.OaatLock{}}
	held := &v1alpha1.OaatLockList{}
	if err := r.List(ctx, held, client.InNamespace(group.Namespace), client.MatchingFields{lockHolderIndex: group.Name}); err != nil {
		return in, fmt.Errorf("listing the OaatLocks the group holds: %w", err)
	}
	for i := range held.Items {
		in.Locks[held.Items[i].Name] = &held.Items[i]
	}
	waiting := map[string]bool{}
	for _, name := range group.Spec.Locks {
		if in.Locks[name] == nil {
			lock := &v1alpha1.OaatLock{}
			err := r.Get(ctx, client.ObjectKey{Namespace: group.Namespace, Name: name}, lock)
			switch {
			case err == nil:
				in.Locks[name] = lock
			case !apierrors.IsNotFound(err):
				return in, fmt.Errorf("reading OaatLock %s: %w", name, err)
			}
		}
		groups := &v1alpha1.OaatGroupList{}
		if err := r.List(ctx, groups, client.InNamespace(group.Namespace), client.MatchingFields{lockIndex: name}); err != nil {
			return in, fmt.Errorf("listing the groups naming OaatLock %s: %w", name, err)
		}
		for i := range groups.Items {
			g := &groups.Items[i]
			if g.Name == group.Name || g.Status.LockWait == nil || waiting[g.Name] {
				continue
			}
			waiting[g.Name] = true
			in.Waiters = append(in.Waiters, planner.LockWaiter{Group: g.Name, Since: g.Status.LockWait.Since.Time, Locks: g.Spec.Locks})
		}
	}
	return in, nil
}

// acquireLocks writes the group's new run into the holders of each lock, in the plan's order
// (by name), each write conditional on the lock being unchanged since it was read, so that two
// groups never both take the last slot. It reports whether every lock was taken; when one was
// not, those already taken are given back and nothing else of the plan is applied.
func (r *OaatGroupReconciler) acquireLocks(ctx context.Context, group *v1alpha1.OaatGroup, updates []planner.LockUpdate, pod string) (bool, error) {
	for i, u := range updates {
		lock := u.Lock.DeepCopy()
		lock.Status.Holders = u.Holders
		lock.Status.HolderCount = int32(len(u.Holders))
		err := r.Status().Update(ctx, lock)
		if err == nil {
			continue
		}
		if undoErr := r.giveBack(ctx, group, updates[:i], pod); undoErr != nil {
			log.FromContext(ctx).Error(undoErr, "Cannot give back the locks taken so far; the next pass releases them")
		}
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			log.FromContext(ctx).V(1).Info("A lock changed since it was read; trying again", "oaatLock", lock.Name)
			return false, nil
		}
		return false, fmt.Errorf("taking a slot of OaatLock %s: %w", lock.Name, err)
	}
	return true, nil
}

// giveBack removes the group's holder for pod from each lock, read again from the API server.
func (r *OaatGroupReconciler) giveBack(ctx context.Context, group *v1alpha1.OaatGroup, updates []planner.LockUpdate, pod string) error {
	for _, u := range updates {
		if err := r.dropHolder(ctx, client.ObjectKeyFromObject(u.Lock), func(h v1alpha1.LockHolder) bool {
			return h.Group == group.Name && h.Pod == pod
		}); err != nil {
			return err
		}
	}
	return nil
}

// releaseLocks gives back the group's slots that the plan releases. The decision was made from
// the cache: unless the group's status was just written (then the decision saw the group as it
// is), the group is read from the API server first and nothing is released when it has changed
// since, as a lagging cache could show an older status that does not name the running pod yet.
func (r *OaatGroupReconciler) releaseLocks(ctx context.Context, group *v1alpha1.OaatGroup, updates []planner.LockUpdate, statusWritten bool) (bool, error) {
	if len(updates) == 0 {
		return true, nil
	}
	if !statusWritten {
		fresh := &v1alpha1.OaatGroup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(group), fresh); err != nil {
			return false, fmt.Errorf("reading the group again before releasing its locks: %w", err)
		}
		if fresh.ResourceVersion != group.ResourceVersion {
			return false, nil
		}
	}
	for _, u := range updates {
		if err := r.dropHolder(ctx, client.ObjectKeyFromObject(u.Lock), func(h v1alpha1.LockHolder) bool {
			return h.Group == group.Name && planner.StaleHolder(h, group)
		}); err != nil {
			return false, err
		}
		log.FromContext(ctx).V(1).Info("Released a lock", "oaatLock", u.Lock.Name)
	}
	return true, nil
}

// dropHolder removes the holders that match from the lock, reading it again from the API server
// on a conflict; a lock that is gone has no holder to remove.
func (r *OaatGroupReconciler) dropHolder(ctx context.Context, key client.ObjectKey, match func(v1alpha1.LockHolder) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lock := &v1alpha1.OaatLock{}
		if err := r.APIReader.Get(ctx, key, lock); err != nil {
			return err
		}
		return writeHolders(ctx, r.Client, lock, slices.DeleteFunc(slices.Clone(lock.Status.Holders), match))
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing a slot of OaatLock %s: %w", key.Name, err)
	}
	return nil
}

// writeHolders writes the lock's new holders, if they differ, conditional on the lock being
// unchanged since it was read.
func writeHolders(ctx context.Context, c client.Client, lock *v1alpha1.OaatLock, holders []v1alpha1.LockHolder) error {
	if equality.Semantic.DeepEqual(lock.Status.Holders, holders) || len(lock.Status.Holders) == 0 && len(holders) == 0 {
		return nil
	}
	lock.Status.Holders = holders
	lock.Status.HolderCount = int32(len(holders))
	return c.Status().Update(ctx, lock)
}

// setupLockIndexes registers the field indexes of the locks: OaatGroups by the locks they name,
// OaatLocks by the groups holding a slot.
func setupLockIndexes(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatGroup{}, lockIndex, namedLocks); err != nil {
		return fmt.Errorf("indexing OaatGroups by OaatLock: %w", err)
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.OaatLock{}, lockHolderIndex, holderGroups); err != nil {
		return fmt.Errorf("indexing OaatLocks by holder: %w", err)
	}
	return nil
}

// namedLocks are the locks a group names.
func namedLocks(obj client.Object) []string {
	return obj.(*v1alpha1.OaatGroup).Spec.Locks
}

// holderGroups are the groups holding a slot of a lock.
func holderGroups(obj client.Object) []string {
	var groups []string
	for _, h := range obj.(*v1alpha1.OaatLock).Status.Holders {
		groups = append(groups, h.Group)
	}
	return groups
}

// groupsOfLock maps a lock to the groups that name it, which may be waiting for a slot it frees,
// and to the groups holding a slot of it.
func (r *OaatGroupReconciler) groupsOfLock(ctx context.Context, obj client.Object) []reconcile.Request {
	requests := r.groupsNaming(lockIndex)(ctx, obj)
	for _, h := range obj.(*v1alpha1.OaatLock).Status.Holders {
		req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: h.Group}}
		if !slices.Contains(requests, req) {
			requests = append(requests, req)
		}
	}
	return requests
}
