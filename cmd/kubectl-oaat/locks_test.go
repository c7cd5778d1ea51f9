package main

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

func TestLocksShowsHoldersAndWaiters(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	lock := builders.Lock("nas", 1)
	lock.Namespace = ns
	if err := k8sClient.Create(t.Context(), lock); err != nil {
		t.Fatal(err)
	}
	lock.Status.Holders = []v1alpha1.LockHolder{{Group: "photos", GroupUID: "uid", Item: "/srv/photos", Pod: "photos-x-1", Since: metav1.Now()}}
	if err := k8sClient.Status().Update(t.Context(), lock); err != nil {
		t.Fatal(err)
	}
	music := newGroup(t, ns, "music", "a")
	music.Spec.Locks = []string{"nas"}
	if err := k8sClient.Update(t.Context(), music); err != nil {
		t.Fatal(err)
	}
	music.Status.LockWait = &v1alpha1.LockWait{Since: metav1.Now(), Locks: []string{"nas"}}
	if err := k8sClient.Status().Update(t.Context(), music); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := kubectlOaat(t.Context(), ns, "locks")
	t.Logf("stdout:\n%s", stdout)
	if err != nil {
		t.Fatalf("locks: %v (stderr %q)", err, stderr)
	}
	for _, want := range []string{"nas   1         1        1", "nas: held by photos (item /srv/photos, pod photos-x-1, for ", "waiting: music ("} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if _, _, err := kubectlOaat(t.Context(), ns, "locks", "missing"); err == nil || !strings.Contains(err.Error(), `OaatLock "missing" not found`) {
		t.Errorf("locks missing: error %v, want not found", err)
	}
}

func TestLocksShowsClusterOaatLocks(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	lock := builders.ClusterLock(ns+"-shared", 2)
	lock.Spec.NamespaceSelector = &metav1.LabelSelector{} // every namespace
	if err := k8sClient.Create(t.Context(), lock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(context.Background(), lock) })
	lock.Status.Holders = []v1alpha1.LockHolder{{Namespace: "elsewhere", Group: "photos", GroupUID: "uid", Item: "/srv/photos", Pod: "photos-x-1", Since: metav1.Now()}}
	lock.Status.HolderCount = 1
	if err := k8sClient.Status().Update(t.Context(), lock); err != nil {
		t.Fatal(err)
	}
	music := newGroup(t, ns, "music", "a")
	music.Spec.ClusterLocks = []string{lock.Name}
	if err := k8sClient.Update(t.Context(), music); err != nil {
		t.Fatal(err)
	}
	music.Status.LockWait = &v1alpha1.LockWait{Since: metav1.Now(), Locks: []string{v1alpha1.ClusterLockKey(lock.Name)}}
	if err := k8sClient.Status().Update(t.Context(), music); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"locks"}, {"locks", lock.Name}, {"locks", "ClusterOaatLock/" + lock.Name}} {
		stdout, stderr, err := kubectlOaat(t.Context(), ns, args...)
		t.Logf("%v stdout:\n%s", args, stdout)
		if err != nil {
			t.Fatalf("%v: %v (stderr %q)", args, err, stderr)
		}
		for _, want := range []string{"ClusterOaatLock/" + lock.Name + "  2         1        1",
			"held by elsewhere/photos (item /srv/photos, pod photos-x-1, for ", "waiting: music ("} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%v: the output lacks %q", args, want)
			}
		}
	}
	stdout, _, err := kubectlOaat(t.Context(), ns, "status", "music")
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	if want := "waiting for ClusterOaatLock " + lock.Name; !strings.Contains(stdout, want) {
		t.Errorf("status lacks %q:\n%s", want, stdout)
	}
}
