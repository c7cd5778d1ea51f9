package history

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

func TestRename(t *testing.T) {
	photo, a, photosOwn := succeeded("/srv/photo", -time.Hour), succeeded("/srv/a", -2*time.Hour), failed("/srv/photos", -time.Minute)
	renamed := photo
	renamed.Name = "/srv/photos"
	photoToPhotos := []v1alpha1.ItemRename{{From: "/srv/photo", To: "/srv/photos"}}

	cases := []struct {
		name        string
		in          RenameInput
		wantItems   []v1alpha1.ItemStatus
		wantApplied []v1alpha1.ItemRename
	}{
		{
			name: "the new name takes the whole entry of the old one, in the new name's place",
			in: RenameInput{Items: []v1alpha1.ItemStatus{a, photo, {Name: "/srv/photos"}}, ItemNames: []string{"/srv/a", "/srv/photos"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{a, renamed}, wantApplied: photoToPhotos,
		},
		{
			name: "without an entry of the new name yet",
			in: RenameInput{Items: []v1alpha1.ItemStatus{photo, a}, ItemNames: []string{"/srv/photos", "/srv/a"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{a, renamed}, wantApplied: photoToPhotos,
		},
		{
			name: "applied already: nothing changes",
			in: RenameInput{Items: []v1alpha1.ItemStatus{a, renamed}, ItemNames: []string{"/srv/a", "/srv/photos"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{a, renamed},
		},
		{
			name: "the new name has history of its own: kept",
			in: RenameInput{Items: []v1alpha1.ItemStatus{photo, photosOwn}, ItemNames: []string{"/srv/photos"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{photo, photosOwn},
		},
		{
			name: "the old name is still an item: no rename",
			in: RenameInput{Items: []v1alpha1.ItemStatus{photo}, ItemNames: []string{"/srv/photo", "/srv/photos"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{photo},
		},
		{
			name: "the new name is not an item: no rename",
			in: RenameInput{Items: []v1alpha1.ItemStatus{photo}, ItemNames: []string{"/srv/a"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{photo},
		},
		{
			name: "the old name still runs: its run is recorded first",
			in: RenameInput{Items: []v1alpha1.ItemStatus{photo}, ItemNames: []string{"/srv/photos"},
				Renames: photoToPhotos, Running: "/srv/photo"},
			wantItems: []v1alpha1.ItemStatus{photo},
		},
		{
			name: "the old name has no history: nothing to carry",
			in: RenameInput{Items: []v1alpha1.ItemStatus{{Name: "/srv/photo"}}, ItemNames: []string{"/srv/photos"},
				Renames: photoToPhotos},
			wantItems: []v1alpha1.ItemStatus{{Name: "/srv/photo"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := append([]v1alpha1.ItemStatus(nil), c.in.Items...)
			items, applied := Rename(c.in)
			if diff := cmp.Diff(c.wantItems, items); diff != "" {
				t.Fatalf("items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantApplied, applied); diff != "" {
				t.Fatalf("applied (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, c.in.Items); diff != "" {
				t.Fatalf("Rename changed its input:\n%s", diff)
			}
		})
	}
}
