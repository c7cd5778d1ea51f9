package support

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// namespacePoll is how often the namespace helpers poll.
const namespacePoll = 250 * time.Millisecond

// CreateNamespace creates the namespace with labels (an existing one is kept) and waits, at most
// timeout, for its default ServiceAccount, without which the ServiceAccount admission plugin
// refuses pods.
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string, timeout time.Duration) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, namespacePoll, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the default ServiceAccount of %s: %w", name, err)
	}
	return nil
}

// DeleteNamespaces deletes the namespaces and waits, at most timeout, until they are gone.
func DeleteNamespaces(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, names ...string) error {
	for _, name := range names {
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", name, err)
		}
	}
	var left string
	err := wait.PollUntilContextTimeout(ctx, namespacePoll, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				left = name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s still exists: %w", left, err)
	}
	return nil
}
