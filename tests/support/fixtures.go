package support

import (
	"context"
	"strconv"
	"time"

	"github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/testing/builders"
)

// The objects the suites (integration, e2e, realnode) create, each spelled once: the unit tests'
// (internal/testing/builders) with a name and namespace of the suite's choosing and without the
// fields the API server sets (UID, generation, status).

// Group is builders.Group's OaatGroup (frequency 1h, no failure cool-off, no status) of the
// OaatType with the items, named name in namespace; the wrapper's methods set the rest (Locks,
// ClusterLocks, FailureCoolOff, Frequency...).
func Group(namespace, name, oaatType string, items ...string) *builders.GroupWrapper {
	w := builders.Group(items...).Named(name).Namespace(namespace)
	w.Spec.OaatType = oaatType
	w.OaatGroup.UID, w.OaatGroup.Generation = "", 0
	return w
}

// Type is builders.Type's OaatType, named name in namespace, whose item pods have spec.
func Type(namespace, name string, spec corev1.PodSpec) *v1alpha1.OaatType {
	t := builders.Type().Namespace(namespace).Obj()
	t.Name = name
	t.Spec.Template.Spec = spec
	return t
}

// Busybox is a container of the busybox image that runs script with sh -c, with the item as its
// first positional parameter (so that no shell and no $(VAR) expansion of the kubelet changes it).
func Busybox(name, script string) corev1.Container {
	return corev1.Container{
		Name: name, Image: "busybox",
		Command: []string{"sh", "-c", script, "--", "{{oaat_item}}"},
	}
}

// Restricted is the container meeting the restricted Pod Security Standard: not root (the
// unprivileged user 65534), no privilege escalation, no capability, the runtime's default seccomp
// profile.
func Restricted(c corev1.Container) corev1.Container {
	c.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	return c
}

// RestrictedNamespaceLabels label a namespace so that the API server admits only pods that meet
// the restricted Pod Security Standard (docs/security.md#pod-security).
func RestrictedNamespaceLabels() map[string]string {
	return map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
}

// The annotations by which kwok plays out a pod (hack/cluster/stages/pod-complete.yaml). An
// OaatType's template annotations reach every item pod, so an OaatType scripts its runs.
const (
	// KwokDurationAnnotation is how long kwok keeps the pod Running.
	KwokDurationAnnotation = "oaat.io/test-duration"
	// KwokExitCodeAnnotation is the exit code kwok gives the pod's container when it ends.
	KwokExitCodeAnnotation = "oaat.io/test-exit-code"
)

// KwokType is an OaatType (Type) whose item pods run on kwok's nodes for duration and exit with
// exitCode: one container "main" that would echo its item, of an image no node pulls.
func KwokType(namespace, name, duration string, exitCode int) *v1alpha1.OaatType {
	t := Type(namespace, name, *OnKwokNodes(&corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "main",
		Image:   "example.invalid/item:latest",
		Command: []string{"sh", "-c", `echo processing "$1"`, "--", "{{oaat_item}}"},
	}}}))
	t.Spec.Template.Annotations = map[string]string{
		KwokDurationAnnotation: duration,
		KwokExitCodeAnnotation: strconv.Itoa(exitCode),
	}
	return t
}

// Lock is builders.Lock's OaatLock name of namespace with the capacity and no circuit breaker.
func Lock(namespace, name string, capacity int32) *v1alpha1.OaatLock {
	lock := builders.Lock(name, capacity)
	lock.Namespace = namespace
	return lock
}

// ClusterLock is builders.ClusterLock's ClusterOaatLock name with the capacity, selecting the
// namespaces of the labels instead (every namespace when labels is empty).
func ClusterLock(name string, capacity int32, labels map[string]string) *v1alpha1.ClusterOaatLock {
	lock := builders.ClusterLock(name, capacity)
	lock.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: labels}
	return lock
}

// Run is the OaatRun name of namespace that asks for a run of the group's item.
func Run(namespace, name, group, item string) *v1alpha1.OaatRun {
	return &v1alpha1.OaatRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.OaatRunSpec{OaatGroup: group, Item: item},
	}
}

// SharedBreaker is the setup of the specs of a lock's circuit breaker (the e2e suite's on kwok,
// the realnode suite's on the real node): two groups back up to one target, which their OaatLock
// (capacity 2, circuitBreaker Shared) stands for.
type SharedBreaker struct {
	// Lock is the OaatLock "nas".
	Lock *v1alpha1.OaatLock
	// Items are the items of each group: photos (a, b, c) and music (x, y).
	Items map[string][]string
	// Objects are the lock and the groups, to create (after the OaatType).
	Objects []client.Object
}

// SharedBreakerExitCode is the exit code by which the target of a SharedBreaker is down
// (EX_TEMPFAIL): the one exit code of the groups' breaker.
const SharedBreakerExitCode = 75

// NewSharedBreaker is the lock and the groups of namespace, of the OaatType: each group names the
// lock, keeps a failed item back for an hour (failureCoolOff 1h, so only the breaker's probes
// retry) and opens its breaker after two items failed with SharedBreakerExitCode, probing every
// 2s, then up to every 4s.
func NewSharedBreaker(namespace, oaatType string) SharedBreaker {
	s := SharedBreaker{
		Lock:  Lock(namespace, "nas", 2),
		Items: map[string][]string{"photos": {"a", "b", "c"}, "music": {"x", "y"}},
	}
	s.Lock.Spec.CircuitBreaker = v1alpha1.LockBreakerShared
	s.Objects = []client.Object{s.Lock}
	for _, name := range []string{"photos", "music"} {
		group := Group(namespace, name, oaatType, s.Items[name]...).Locks(s.Lock.Name).FailureCoolOff("1h").Obj()
		group.Spec.CircuitBreaker = &v1alpha1.CircuitBreaker{
			ConsecutiveItemFailures: 2, ExitCodes: []int32{SharedBreakerExitCode}, ProbeInterval: "2s", MaxProbeInterval: "4s",
		}
		s.Objects = append(s.Objects, group)
	}
	return s
}

// ExpectRecovered checks, with g, that every item of both groups (each read by get) has
// succeeded and has no failure count left.
func (s SharedBreaker) ExpectRecovered(g gomega.Gomega, get func(g gomega.Gomega, name string) *v1alpha1.OaatGroup) {
	for name, items := range s.Items {
		group := get(g, name)
		for _, item := range items {
			it := ItemStatus(group, item)
			g.Expect(it).NotTo(gomega.BeNil(), "group %s item %s", name, item)
			g.Expect(it.LastSuccess).NotTo(gomega.BeNil(), "group %s item %s", name, item)
			g.Expect(it.FailureCount).To(gomega.BeZero(), "group %s item %s", name, item)
		}
	}
}

// Probes are the probes among the pods of both groups that the tracker saw (Probes), and the pods
// that lived beside one.
func (s SharedBreaker) Probes(tracker *OverlapTracker, from time.Time, slack time.Duration) (probes []PodRecord, beside []string) {
	var all []PodRecord
	for name := range s.Items {
		all = append(all, tracker.PodsOf(s.Lock.Namespace, name)...)
	}
	return Probes(all, from, slack)
}

// BoundClaim is a claim named name in namespace, with labels, bound to a PersistentVolume of its
// own (1Mi, ReadWriteOnce, retained, named namespace-name): the host directory path. The
// storage class, of the test's choosing, keeps other claims away from the volume.
func BoundClaim(namespace, name, storageClass, path string, labels map[string]string) (*corev1.PersistentVolume, *corev1.PersistentVolumeClaim) {
	capacity := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity: capacity, AccessModes: rwo, StorageClassName: storageClass,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: namespace, Name: name},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}},
		},
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: rwo, StorageClassName: &storageClass, VolumeName: pv.Name,
			Resources: corev1.VolumeResourceRequirements{Requests: capacity},
		},
	}
	return pv, claim
}

// ExpectClaimsBound checks that the namespace has count claims, all Bound; g is the caller's
// Gomega (an Eventually's).
func ExpectClaimsBound(ctx context.Context, g gomega.Gomega, c client.Client, namespace string, count int) {
	claims := &corev1.PersistentVolumeClaimList{}
	g.Expect(c.List(ctx, claims, client.InNamespace(namespace))).To(gomega.Succeed())
	g.Expect(claims.Items).To(gomega.HaveLen(count))
	for _, claim := range claims.Items {
		g.Expect(claim.Status.Phase).To(gomega.Equal(corev1.ClaimBound), "claim %s", claim.Name)
	}
}
