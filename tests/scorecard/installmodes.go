package main

import (
	"fmt"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

const installModesWiredTest = "oaat-install-modes-wired"

// watchNamespaceFieldPath is the downward-API path of the annotation in which OLM puts the
// OperatorGroup's target namespaces on the operator's pod template (empty for all namespaces).
const watchNamespaceFieldPath = "metadata.annotations['olm.targetNamespaces']"

// allInstallModes are the install modes the manager supports: it watches the comma-separated
// namespaces of WATCH_NAMESPACE, or all namespaces when it is empty.
var allInstallModes = []operatorsv1alpha1.InstallModeType{
	operatorsv1alpha1.InstallModeTypeOwnNamespace,
	operatorsv1alpha1.InstallModeTypeSingleNamespace,
	operatorsv1alpha1.InstallModeTypeMultiNamespace,
	operatorsv1alpha1.InstallModeTypeAllNamespaces,
}

// checkInstallModes checks that the CSV's install modes and its Deployment agree: every install
// mode the manager supports is declared, and, since any mode but AllNamespaces restricts the
// namespaces, the manager container takes WATCH_NAMESPACE from the olm.targetNamespaces
// annotation. Without that wiring OLM would install the operator for some namespaces and the
// manager would still watch all of them (and lack the RBAC to). The built-in tests check neither.
func checkInstallModes(b *bundle) ([]string, string) {
	var problems []string
	supported := make(map[operatorsv1alpha1.InstallModeType]bool, len(b.csv.Spec.InstallModes))
	for _, m := range b.csv.Spec.InstallModes {
		supported[m.Type] = m.Supported
	}
	var declared []string
	for _, mode := range allInstallModes {
		if supported[mode] {
			declared = append(declared, string(mode))
		} else {
			problems = append(problems, fmt.Sprintf("install mode %s is not declared supported, though the manager supports it (WATCH_NAMESPACE)", mode))
		}
	}
	restricts := supported[operatorsv1alpha1.InstallModeTypeOwnNamespace] ||
		supported[operatorsv1alpha1.InstallModeTypeSingleNamespace] ||
		supported[operatorsv1alpha1.InstallModeTypeMultiNamespace]

	deployments := b.csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	if len(deployments) == 0 {
		problems = append(problems, "the CSV's install strategy has no Deployment")
	}
	var wired []string
	for _, d := range deployments {
		container, err := managerContainer(&d.Spec.Template)
		if err != nil {
			problems = append(problems, fmt.Sprintf("deployment %s: %v", d.Name, err))
			continue
		}
		where := fmt.Sprintf("deployment %s, container %s", d.Name, container.Name)
		env := findEnv(container.Env, "WATCH_NAMESPACE")
		switch {
		case env == nil && restricts:
			problems = append(problems, fmt.Sprintf("%s: no WATCH_NAMESPACE, so the manager would watch all namespaces whatever the OperatorGroup says; set it from the field %s", where, watchNamespaceFieldPath))
		case env == nil:
		case env.Value != "" || env.ValueFrom == nil || env.ValueFrom.FieldRef == nil || env.ValueFrom.FieldRef.FieldPath != watchNamespaceFieldPath:
			problems = append(problems, fmt.Sprintf("%s: WATCH_NAMESPACE must come from the field %s (valueFrom.fieldRef), not %s", where, watchNamespaceFieldPath, describeEnv(env)))
		default:
			wired = append(wired, where)
		}
	}
	return problems, fmt.Sprintf("Install modes supported: %s. WATCH_NAMESPACE from %s in: %s",
		strings.Join(declared, ", "), watchNamespaceFieldPath, strings.Join(wired, "; "))
}

// managerContainer is the container named by the kubectl.kubernetes.io/default-container
// annotation, else the only container.
func managerContainer(t *corev1.PodTemplateSpec) (*corev1.Container, error) {
	if name, ok := t.Annotations["kubectl.kubernetes.io/default-container"]; ok {
		for i := range t.Spec.Containers {
			if t.Spec.Containers[i].Name == name {
				return &t.Spec.Containers[i], nil
			}
		}
		return nil, fmt.Errorf("no container %q, the default container of the pod template", name)
	}
	if len(t.Spec.Containers) != 1 {
		return nil, fmt.Errorf("%d containers and no kubectl.kubernetes.io/default-container annotation to tell the manager's", len(t.Spec.Containers))
	}
	return &t.Spec.Containers[0], nil
}

func findEnv(env []corev1.EnvVar, name string) *corev1.EnvVar {
	for i := range env {
		if env[i].Name == name {
			return &env[i]
		}
	}
	return nil
}

func describeEnv(env *corev1.EnvVar) string {
	switch {
	case env.ValueFrom == nil:
		return fmt.Sprintf("the value %q", env.Value)
	case env.ValueFrom.FieldRef != nil:
		return fmt.Sprintf("the field %s", env.ValueFrom.FieldRef.FieldPath)
	default:
		return "another source"
	}
}
