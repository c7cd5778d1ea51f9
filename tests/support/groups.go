package support

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// DeleteGroups deletes every OaatGroup of the namespaces and waits, at most timeout, until they
// are gone: the first step of the documented uninstall (docs/olm.md, docs/install.md), taken while
// the operator still runs, since a group it reconciled keeps the finalizer oaat.io/history until
// the operator has written its history.
func DeleteGroups(ctx context.Context, c client.Client, timeout time.Duration, namespaces ...string) error {
	for _, ns := range namespaces {
		if err := c.DeleteAllOf(ctx, &v1alpha1.OaatGroup{}, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("deleting the OaatGroups of %s: %w", ns, err)
		}
	}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, namespacePoll, timeout, true, func(ctx context.Context) (bool, error) {
		left = nil
		for _, ns := range namespaces {
			groups := &v1alpha1.OaatGroupList{}
			if err := c.List(ctx, groups, client.InNamespace(ns)); err != nil {
				return false, fmt.Errorf("listing the OaatGroups of %s: %w", ns, err)
			}
			for _, g := range groups.Items {
				left = append(left, g.Namespace+"/"+g.Name)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the OaatGroups to go (left: %v; does the operator run?): %w", left, err)
	}
	return nil
}
