package podbuild

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
)

// claimVolume mounts the claim named claimName.
func claimVolume(name, claimName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName, ReadOnly: true},
	}}
}

// claimTemplate is a template whose volumes are these.
func claimTemplate(volumes ...corev1.Volume) corev1.PodTemplateSpec {
	t := testTemplate()
	t.Spec.Volumes = volumes
	return t
}

func TestBuildClaimNames(t *testing.T) {
	emptyDir := corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	tests := []struct {
		name    string
		volumes []corev1.Volume
		item    string
		want    []corev1.Volume
	}{
		{
			name:    "the item's claim",
			volumes: []corev1.Volume{emptyDir, claimVolume("data", "{{oaat_item}}")},
			item:    "data-web",
			want:    []corev1.Volume{emptyDir, claimVolume("data", "data-web")},
		},
		{
			name:    "the legacy placeholder, within a name, and a fixed claim left as it is",
			volumes: []corev1.Volume{claimVolume("data", "snap-%%oaat_item%%"), claimVolume("target", "backup-target")},
			item:    "db.example",
			want:    []corev1.Volume{claimVolume("data", "snap-db.example"), claimVolume("target", "backup-target")},
		},
		{
			name:    "an item holding a placeholder is inserted literally",
			volumes: []corev1.Volume{claimVolume("data", "{{oaat_item}}-copy")},
			item:    "a",
			want:    []corev1.Volume{claimVolume("data", "a-copy")},
		},
		{
			name:    "no volume",
			volumes: nil,
			item:    "x",
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Group: testGroup(), Template: claimTemplate(tt.volumes...), Item: tt.item, Run: 1}
			before := in.Template.DeepCopy()
			pod, err := Build(in)
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			if !equality.Semantic.DeepEqual(pod.Spec.Volumes, tt.want) {
				t.Errorf("volumes differ (-got +want):\n%s", diff.Diff(pod.Spec.Volumes, tt.want))
			}
			if !equality.Semantic.DeepEqual(&in.Template, before) {
				t.Errorf("Build() changed its input template (-after +before):\n%s", diff.Diff(&in.Template, before))
			}
		})
	}
}

func TestCheckItem(t *testing.T) {
	dns := "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
		"and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
		`'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	long := strings.Repeat("a", 250)
	substituting := claimTemplate(claimVolume("data", "{{oaat_item}}"))
	tests := []struct {
		name     string
		template corev1.PodTemplateSpec
		item     string
		wantErr  string
	}{
		{name: "a claim name", template: substituting, item: "data-web"},
		{name: "no claim substituted: any item", template: claimTemplate(claimVolume("data", "fixed")), item: "/srv/photos"},
		{name: "no claim volume: any item", template: testTemplate(), item: "Not A Name"},
		{
			name: "a path", template: substituting, item: "/srv/photos",
			wantErr: `item "/srv/photos" makes claimName "/srv/photos" of volume data, not a valid claim name: ` + dns,
		},
		{
			name: "a dollar is refused whatever its escape", template: substituting, item: "a$b",
			wantErr: `item "a$b" makes claimName "a$$b" of volume data, not a valid claim name: ` + dns,
		},
		{
			name: "too long once in the template", template: claimTemplate(claimVolume("data", "snap-%%oaat_item%%")), item: long,
			wantErr: `item "` + long + `" makes claimName "snap-` + long + `" of volume data, not a valid claim name: must be no more than 253 characters`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckItem(&tt.template, tt.item)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Fatalf("CheckItem() = %q\nwant %q", got, tt.wantErr)
			}
			if _, buildErr := Build(Input{Group: testGroup(), Template: tt.template, Item: tt.item, Run: 1}); (buildErr != nil) != (tt.wantErr != "") {
				t.Errorf("Build() error = %v, want one exactly when CheckItem fails", buildErr)
			}
		})
	}
}
