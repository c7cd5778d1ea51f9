package podbuild

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// groupKind is the kind of the owner of item pods.
const groupKind = "OaatGroup"

// Input is what Build needs to make the pod of one run of an item.
type Input struct {
	// Group is the OaatGroup the item belongs to; it owns the pod and names its namespace.
	Group *v1alpha1.OaatGroup
	// Template is the pod template of the group's OaatType. Build does not modify it.
	Template corev1.PodTemplateSpec
	// Item is the item to run.
	Item string
	// Run is the number of the run, at least 1: the group's status.runCount once the run is
	// counted. It makes the pod name unique.
	Run int64
	// Verifies is, for the pod of a verification (spec.verify), the run it verifies, whose facts
	// its containers get (sourceEnv); nil for a run of the item.
	Verifies *v1alpha1.PendingVerification
}

// Build returns the pod that runs in.Item for the run in.Run of in.Group. The pod is named by
// Name, lives in the group's namespace, is controlled by the group and carries the finalizer
// v1alpha1.FinalizerRunTracking, so that it stays until its run's outcome is recorded. It carries the template's
// labels and annotations, overridden by the operator's (v1alpha1.LabelManagedBy, LabelGroup,
// LabelItem, LabelRun and AnnotationItem). Its spec is a copy of the template's with
// restartPolicy Never, and in every container and init container the placeholders of Substitute
// replaced in command, args and env values, and the env variable v1alpha1.EnvItem set to the item
// (see setItem); the placeholders are also replaced in every volume's
// persistentVolumeClaim.claimName.
//
// Build fails when the template cannot run an item: a restartPolicy other than Never, no
// containers, or an item that does not make a valid claim name where the template substitutes it
// into one (CheckItem). The error names the field of the OaatType at fault.
func Build(in Input) (*corev1.Pod, error) {
	if err := checkInput(in); err != nil {
		return nil, err
	}
	spec := in.Template.Spec.DeepCopy()
	spec.RestartPolicy = corev1.RestartPolicyNever
	replacer := itemReplacer(in.Item)
	env := append([]corev1.EnvVar{{Name: v1alpha1.EnvItem, Value: escapeExpansion(in.Item)}}, sourceEnv(in.Verifies)...)
	for i := range spec.InitContainers {
		setItem(&spec.InitContainers[i], env, replacer)
	}
	for i := range spec.Containers {
		setItem(&spec.Containers[i], env, replacer)
	}
	substituteClaimNames(spec.Volumes, replacer)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            Name(in.Group.Name, in.Item, in.Run),
			Namespace:       in.Group.Namespace,
			Labels:          labels(in),
			Annotations:     annotations(in),
			OwnerReferences: []metav1.OwnerReference{ownerReference(in.Group)},
			Finalizers:      []string{v1alpha1.FinalizerRunTracking},
		},
		Spec: *spec,
	}, nil
}

// checkInput returns an error naming the first field of in that Build cannot use.
func checkInput(in Input) error {
	switch {
	case in.Group == nil:
		return errors.New("missing group: Input.Group is nil")
	case in.Item == "":
		return errors.New("missing item: Input.Item is empty")
	case in.Run < 1:
		return fmt.Errorf("invalid run number %d: Input.Run must be at least 1", in.Run)
	}
	spec := in.Template.Spec
	if spec.RestartPolicy != "" && spec.RestartPolicy != corev1.RestartPolicyNever {
		return fmt.Errorf("spec.template.spec.restartPolicy %q is not allowed: an item run ends when its pod ends, so it must be Never or unset", spec.RestartPolicy)
	}
	if len(spec.Containers) == 0 {
		return errors.New("spec.template.spec.containers is empty: a pod needs at least one container")
	}
	if err := CheckItem(&in.Template, in.Item); err != nil {
		return fmt.Errorf("spec.template.spec.volumes: %w", err)
	}
	return nil
}

// labels returns the template's labels with the operator's set over them.
func labels(in Input) map[string]string {
	labels := make(map[string]string, len(in.Template.Labels)+4)
	maps.Copy(labels, in.Template.Labels)
	labels[v1alpha1.LabelManagedBy] = v1alpha1.ManagedByValue
	labels[v1alpha1.LabelGroup] = in.Group.Name
	labels[v1alpha1.LabelItem] = ItemLabelValue(in.Item)
	labels[v1alpha1.LabelRun] = strconv.FormatInt(in.Run, 10)
	delete(labels, v1alpha1.LabelPurpose)
	if in.Verifies != nil {
		labels[v1alpha1.LabelPurpose] = string(v1alpha1.PurposeVerify)
	}
	return labels
}

// annotations returns the template's annotations with the exact item set over them.
func annotations(in Input) map[string]string {
	annotations := make(map[string]string, len(in.Template.Annotations)+1)
	maps.Copy(annotations, in.Template.Annotations)
	annotations[v1alpha1.AnnotationItem] = in.Item
	return annotations
}

// ownerReference makes group the controller of the pod, so that deleting the group deletes its
// pods and the pods' events reach the group's reconciler.
func ownerReference(group *v1alpha1.OaatGroup) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         v1alpha1.GroupVersion.String(),
		Kind:               groupKind,
		Name:               group.Name,
		UID:                group.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// setItem substitutes the item into c's command, args and env values, and sets the operator's
// env variables (v1alpha1.EnvItem, and a verification's EnvSource*) first, so that the template's
// other variables can refer to them as $(OAAT_ITEM). The template's own definitions of those
// names, valueFrom ones included, are dropped, so that there is exactly one of each. Other env
// entries that take their value from a source (valueFrom) are kept as they are.
func setItem(c *corev1.Container, operators []corev1.EnvVar, replacer *strings.Replacer) {
	for i := range c.Command {
		c.Command[i] = replacer.Replace(c.Command[i])
	}
	for i := range c.Args {
		c.Args[i] = replacer.Replace(c.Args[i])
	}
	env := make([]corev1.EnvVar, 0, len(c.Env)+len(operators))
	env = append(env, operators...)
	for _, e := range c.Env {
		if slices.ContainsFunc(operators, func(o corev1.EnvVar) bool { return o.Name == e.Name }) || reservedSource(e.Name) {
			continue
		}
		e.Value = replacer.Replace(e.Value)
		env = append(env, e)
	}
	c.Env = env
}

// sourceEnv are the env variables that give a verification's pod the facts of the run it
// verifies, escaped as the item is: values only, never substituted into a command.
func sourceEnv(v *v1alpha1.PendingVerification) []corev1.EnvVar {
	if v == nil {
		return nil
	}
	env := []corev1.EnvVar{
		{Name: v1alpha1.EnvSourcePod, Value: escapeExpansion(v.PodName)},
		{Name: v1alpha1.EnvSourceFinishedAt, Value: v.FinishedAt.UTC().Format(time.RFC3339)},
	}
	if v.ExitCode != nil {
		env = append(env, corev1.EnvVar{Name: v1alpha1.EnvSourceExitCode, Value: strconv.Itoa(int(*v.ExitCode))})
	}
	return append(env, corev1.EnvVar{Name: v1alpha1.EnvSourceResult, Value: escapeExpansion(v.Result)})
}

// reservedSource reports whether name is one of the verification's env variables, which a
// template cannot set: a run's pod does not have them, and a verification's has the operator's.
func reservedSource(name string) bool {
	switch name {
	case v1alpha1.EnvSourcePod, v1alpha1.EnvSourceFinishedAt, v1alpha1.EnvSourceExitCode, v1alpha1.EnvSourceResult:
		return true
	}
	return false
}
