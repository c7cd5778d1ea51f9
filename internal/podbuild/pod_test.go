package podbuild

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func testGroup() *v1alpha1.OaatGroup {
	return &v1alpha1.OaatGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "backups", Namespace: "ops", UID: "6f1c1f5e-0000-4000-8000-000000000001"},
	}
}

// nodeName is an env source that Build must leave as it is.
var nodeName = &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}

// testTemplate is a template with labels and annotations that collide with the operator's,
// volumes, two init containers and two containers, placeholders in command, args and env, and
// OAAT_ITEM defined once, twice and not at all.
func testTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels: map[string]string{
				"app":                   "backup",
				v1alpha1.LabelManagedBy: "helm",
				v1alpha1.LabelGroup:     "spoofed",
				v1alpha1.LabelRun:       "999",
			},
			Annotations: map[string]string{
				"note":                  "kept",
				v1alpha1.AnnotationItem: "spoofed",
			},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName: "backup",
			Volumes: []corev1.Volume{
				{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "restic"},
				}}},
			},
			InitContainers: []corev1.Container{
				{
					Name:    "prepare",
					Image:   "busybox",
					Command: []string{"mkdir", "-p", "/work/{{oaat_item}}"},
					Env: []corev1.EnvVar{
						{Name: v1alpha1.EnvItem, ValueFrom: nodeName},
						{Name: "KEEP", Value: "plain"},
						{Name: v1alpha1.EnvItem, Value: "duplicate"},
					},
				},
				{Name: "check", Image: "busybox", Args: []string{"test", "-d", "%%oaat_item%%"}},
			},
			Containers: []corev1.Container{
				{
					Name:    "backup",
					Image:   "restic",
					Command: []string{"restic", "backup"},
					Args:    []string{"{{oaat_item}}", "--tag=%%oaat_item%%"},
					Env: []corev1.EnvVar{
						{Name: "TARGET", Value: "{{oaat_item}}/sub"},
						{Name: "NODE", ValueFrom: nodeName},
						{Name: v1alpha1.EnvItem, Value: "old"},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: "/work"}},
				},
				{Name: "sidecar", Image: "busybox"},
			},
		},
	}
}

// wantPod is the pod that Build makes of testTemplate for item in run 3 of testGroup. literal is
// the item as it is inserted in command, args and env values: with every $ doubled.
func wantPod(item, literal string) *corev1.Pod {
	itemEnv := corev1.EnvVar{Name: v1alpha1.EnvItem, Value: literal}
	spec := testTemplate().Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.InitContainers[0].Command = []string{"mkdir", "-p", "/work/" + literal}
	spec.InitContainers[0].Env = []corev1.EnvVar{itemEnv, {Name: "KEEP", Value: "plain"}}
	spec.InitContainers[1].Args = []string{"test", "-d", literal}
	spec.InitContainers[1].Env = []corev1.EnvVar{itemEnv}
	spec.Containers[0].Args = []string{literal, "--tag=" + literal}
	spec.Containers[0].Env = []corev1.EnvVar{
		itemEnv,
		{Name: "TARGET", Value: literal + "/sub"},
		{Name: "NODE", ValueFrom: nodeName},
	}
	spec.Containers[1].Env = []corev1.EnvVar{itemEnv}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      Name("backups", item, 3),
			Namespace: "ops",
			Labels: map[string]string{
				"app":                   "backup",
				v1alpha1.LabelManagedBy: "oaat-operator",
				v1alpha1.LabelGroup:     "backups",
				v1alpha1.LabelItem:      ItemLabelValue(item),
				v1alpha1.LabelRun:       "3",
			},
			Annotations: map[string]string{
				"note":                  "kept",
				v1alpha1.AnnotationItem: item,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         "oaat.io/v1alpha1",
				Kind:               "OaatGroup",
				Name:               "backups",
				UID:                "6f1c1f5e-0000-4000-8000-000000000001",
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
			Finalizers: []string{"oaat.io/run-tracking"},
		},
		Spec: spec,
	}
}

// serviceEnv stands for the variables the kubelet adds to those of a container, so that an item
// that refers to them would expand if it were not escaped.
var serviceEnv = map[string]string{"HOME": "/root", "OAAT_ITEM": "spoofed"}

// expandContainer returns c as the kubelet runs it (see kubeletExpand): its env values expanded in
// order, each against serviceEnv and the variables before it, then its command and args against
// them all. Env entries with a source keep their empty value.
func expandContainer(c corev1.Container) corev1.Container {
	c = *c.DeepCopy()
	vars := maps.Clone(serviceEnv)
	for i, e := range c.Env {
		if e.Value != "" {
			c.Env[i].Value = kubeletExpand(e.Value, vars)
		}
		vars[e.Name] = c.Env[i].Value
	}
	for i := range c.Command {
		c.Command[i] = kubeletExpand(c.Command[i], vars)
	}
	for i := range c.Args {
		c.Args[i] = kubeletExpand(c.Args[i], vars)
	}
	return c
}

// checkItemEnv checks that OAAT_ITEM, set to literal, is the first env variable of every container
// and init container of pod, and the only one of that name.
func checkItemEnv(t *testing.T, pod *corev1.Pod, literal string) {
	t.Helper()
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		want := corev1.EnvVar{Name: v1alpha1.EnvItem, Value: literal}
		if len(c.Env) == 0 || !equality.Semantic.DeepEqual(c.Env[0], want) {
			t.Errorf("container %s: env = %v, want %v first", c.Name, c.Env, want)
		}
		n := 0
		for _, e := range c.Env {
			if e.Name == v1alpha1.EnvItem {
				n++
			}
		}
		if n != 1 {
			t.Errorf("container %s: %d env variables %s, want 1", c.Name, n, v1alpha1.EnvItem)
		}
	}
}

// envVar returns the env variable of c named name, and stops the test when there is none.
func envVar(t *testing.T, c corev1.Container, name string) *corev1.EnvVar {
	t.Helper()
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		t.Fatalf("container %s has no env variable %s", c.Name, name)
	}
	return &c.Env[i]
}

func TestBuild(t *testing.T) {
	tests := []struct {
		item    string
		literal string // the item in command, args and env values
	}{
		{"/srv/photos", "/srv/photos"},
		{strings.Repeat("abcdefghi/", 20), strings.Repeat("abcdefghi/", 20)},
		{"$(HOME)", "$$(HOME)"},
		{"a$b", "a$$b"},
		{"$$", "$$$$"},
		{"$(OAAT_ITEM)", "$$(OAAT_ITEM)"},
	}
	for _, tt := range tests {
		item := tt.item
		t.Run(item, func(t *testing.T) {
			in := Input{Group: testGroup(), Template: testTemplate(), Item: item, Run: 3}
			before := in.Template.DeepCopy()

			got, err := Build(in)
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			if want := wantPod(item, tt.literal); !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("Build() differs from the expected pod (-got +want):\n%s", diff.Diff(got, want))
			}
			checkItemEnv(t, got, tt.literal)
			if errs := validation.IsDNS1123Label(got.Name); len(errs) > 0 {
				t.Errorf("pod name %q: %v", got.Name, errs)
			}
			for k, v := range got.Labels {
				if errs := content.IsLabelValue(v); len(errs) > 0 {
					t.Errorf("label %s=%q: %v", k, v, errs)
				}
			}

			// The kubelet's expansion gives the item back literally: the containers run as those of
			// the pod with the item unescaped.
			want := wantPod(item, item).Spec
			for i, c := range got.Spec.InitContainers {
				if c, want := expandContainer(c), want.InitContainers[i]; !equality.Semantic.DeepEqual(c, want) {
					t.Errorf("init container %s expands differently (-got +want):\n%s", c.Name, diff.Diff(c, want))
				}
			}
			for i, c := range got.Spec.Containers {
				if c, want := expandContainer(c), want.Containers[i]; !equality.Semantic.DeepEqual(c, want) {
					t.Errorf("container %s expands differently (-got +want):\n%s", c.Name, diff.Diff(c, want))
				}
			}

			// The pod shares nothing with the template: changing it leaves the template as it was.
			got.Labels["app"] = "changed"
			got.Annotations["note"] = "changed"
			got.Spec.Volumes[0].Name = "changed"
			got.Spec.Containers[0].Command[0] = "changed"
			envVar(t, got.Spec.Containers[0], "NODE").ValueFrom.FieldRef.FieldPath = "changed"
			envVar(t, got.Spec.InitContainers[0], "KEEP").Value = "changed"
			if !equality.Semantic.DeepEqual(&in.Template, before) {
				t.Errorf("Build() changed its input template (-after +before):\n%s", diff.Diff(&in.Template, before))
			}
		})
	}
}

func TestBuildEnv(t *testing.T) {
	const item, literal = "$(HOME)", "$$(HOME)"
	itemEnv := corev1.EnvVar{Name: v1alpha1.EnvItem, Value: literal}
	tests := []struct {
		name     string
		env      []corev1.EnvVar
		want     []corev1.EnvVar
		expanded map[string]string // values of env variables once the kubelet expands them
	}{
		{
			name:     "no env",
			want:     []corev1.EnvVar{itemEnv},
			expanded: map[string]string{v1alpha1.EnvItem: item},
		},
		{
			name: "reference to OAAT_ITEM",
			env: []corev1.EnvVar{
				{Name: "REF", Value: "$(OAAT_ITEM)"},
				{Name: "BOTH", Value: "$(OAAT_ITEM):{{oaat_item}}"},
				{Name: "ESCAPED", Value: "$$(OAAT_ITEM)"},
			},
			want: []corev1.EnvVar{
				itemEnv,
				{Name: "REF", Value: "$(OAAT_ITEM)"},
				{Name: "BOTH", Value: "$(OAAT_ITEM):" + literal},
				{Name: "ESCAPED", Value: "$$(OAAT_ITEM)"},
			},
			expanded: map[string]string{v1alpha1.EnvItem: item, "REF": item, "BOTH": item + ":" + item, "ESCAPED": "$(OAAT_ITEM)"},
		},
		{
			name: "reference to OAAT_ITEM before its definition",
			env: []corev1.EnvVar{
				{Name: "REF", Value: "$(OAAT_ITEM)"},
				{Name: v1alpha1.EnvItem, Value: "old"},
			},
			want:     []corev1.EnvVar{itemEnv, {Name: "REF", Value: "$(OAAT_ITEM)"}},
			expanded: map[string]string{v1alpha1.EnvItem: item, "REF": item},
		},
		{
			name: "OAAT_ITEM defined twice",
			env: []corev1.EnvVar{
				{Name: v1alpha1.EnvItem, Value: "one"},
				{Name: "X", Value: "y"},
				{Name: v1alpha1.EnvItem, ValueFrom: nodeName},
			},
			want:     []corev1.EnvVar{itemEnv, {Name: "X", Value: "y"}},
			expanded: map[string]string{v1alpha1.EnvItem: item, "X": "y"},
		},
		{
			name: "OAAT_ITEM defined twice in a row",
			env: []corev1.EnvVar{
				{Name: v1alpha1.EnvItem, Value: "{{oaat_item}}"},
				{Name: v1alpha1.EnvItem, Value: "$(OAAT_ITEM)"},
			},
			want:     []corev1.EnvVar{itemEnv},
			expanded: map[string]string{v1alpha1.EnvItem: item},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			template := testTemplate()
			template.Spec.InitContainers[0].Env = tt.env
			template.Spec.Containers[0].Env = slices.Clone(tt.env)
			got, err := Build(Input{Group: testGroup(), Template: template, Item: item, Run: 1})
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			checkItemEnv(t, got, literal)
			for _, c := range []corev1.Container{got.Spec.InitContainers[0], got.Spec.Containers[0]} {
				if !equality.Semantic.DeepEqual(c.Env, tt.want) {
					t.Errorf("container %s: env differs (-got +want):\n%s", c.Name, diff.Diff(c.Env, tt.want))
				}
				expanded := make(map[string]string, len(c.Env))
				for _, e := range expandContainer(c).Env {
					expanded[e.Name] = e.Value
				}
				if !maps.Equal(expanded, tt.expanded) {
					t.Errorf("container %s: expanded env = %q, want %q", c.Name, expanded, tt.expanded)
				}
			}
		})
	}
}

func TestBuildRestartPolicy(t *testing.T) {
	tests := []struct {
		policy  corev1.RestartPolicy
		want    corev1.RestartPolicy
		wantErr string
	}{
		{policy: "", want: corev1.RestartPolicyNever},
		{policy: corev1.RestartPolicyNever, want: corev1.RestartPolicyNever},
		{policy: corev1.RestartPolicyAlways, wantErr: `spec.template.spec.restartPolicy "Always" is not allowed: an item run ends when its pod ends, so it must be Never or unset`},
		{policy: corev1.RestartPolicyOnFailure, wantErr: `spec.template.spec.restartPolicy "OnFailure" is not allowed`},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			template := testTemplate()
			template.Spec.RestartPolicy = tt.policy
			got, err := Build(Input{Group: testGroup(), Template: template, Item: "x", Run: 1})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Build() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			if got.Spec.RestartPolicy != tt.want {
				t.Errorf("restartPolicy = %q, want %q", got.Spec.RestartPolicy, tt.want)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	noContainers := testTemplate()
	noContainers.Spec.Containers = nil
	tests := []struct {
		name    string
		in      Input
		wantErr string
	}{
		{"no containers", Input{Group: testGroup(), Template: noContainers, Item: "x", Run: 1}, "spec.template.spec.containers is empty"},
		{"no group", Input{Template: testTemplate(), Item: "x", Run: 1}, "Input.Group is nil"},
		{"no item", Input{Group: testGroup(), Template: testTemplate(), Run: 1}, "Input.Item is empty"},
		{"run 0", Input{Group: testGroup(), Template: testTemplate(), Item: "x"}, "invalid run number 0: Input.Run must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Build() = %v, %v; want an error containing %q", got, err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("Build() returned a pod with its error")
			}
		})
	}
}
