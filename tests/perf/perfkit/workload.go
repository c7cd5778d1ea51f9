package perfkit

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/tests/support"
)

// PodTemplate returns a pod template, for kwok's nodes only, that kwok runs for duration and ends with exitCode; an
// empty duration or exit code leaves it to kwok's random choice (2-8 s, exit 0 or 1).
func PodTemplate(duration, exitCode string) corev1.PodTemplateSpec {
	annotations := map[string]string{}
	if duration != "" {
		annotations[support.KwokDurationAnnotation] = duration
	}
	if exitCode != "" {
		annotations[support.KwokExitCodeAnnotation] = exitCode
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
		Spec: *support.OnKwokNodes(&corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: "example.invalid/item:latest",
				Command: []string{"sh", "-c", "echo processing {{oaat_item}}"},
			}},
		}),
	}
}

// NewOaatType returns an OaatType of namespace whose item pods come from template.
func NewOaatType(namespace, name string, template corev1.PodTemplateSpec) *v1alpha1.OaatType {
	t := support.Type(namespace, name, template.Spec)
	t.Spec.Template.ObjectMeta = template.ObjectMeta
	return t
}

// NewGroup returns an OaatGroup of namespace with the items and frequency, no failure cool-off.
func NewGroup(namespace, name, oaatType, frequency string, items []string) *v1alpha1.OaatGroup {
	return support.Group(namespace, name, oaatType, items...).Frequency(v1alpha1.Duration(frequency)).Obj()
}

// Items returns n item names, item-0 to item-<n-1>.
func Items(n int) []string {
	items := make([]string, n)
	for i := range items {
		items[i] = "item-" + strconv.Itoa(i)
	}
	return items
}

// CreateAll creates the objects with a few requests in flight, so that creating a thousand groups
// takes seconds.
func CreateAll(ctx context.Context, c client.Client, objs []client.Object) error {
	const inFlight = 8
	work := make(chan client.Object)
	errs := make(chan error, len(objs))
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			for obj := range work {
				if err := c.Create(ctx, obj); err != nil {
					errs <- fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
				}
			}
		})
	}
	for _, obj := range objs {
		work <- obj
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}
