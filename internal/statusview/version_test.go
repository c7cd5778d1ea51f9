package statusview

import (
	"bytes"
	"testing"

	"github.com/oaat-io/oaat-operator/internal/version"
)

func TestWriteClientVersion(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteClientVersion(&b, version.Info{Version: "0.3.0", Revision: "0123abc", GoVersion: "go1.26.0"})
	if want := "Client Version: 0.3.0 (revision 0123abc, go1.26.0)\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWriteServerVersions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, client  string
		operators     []Operator
		out, warnings string
	}{
		{
			name:      "same minor version",
			client:    "0.3.0",
			operators: []Operator{{Namespace: "oaat-operator-system", Name: "oaat-operator-controller-manager", Version: "0.3.2"}},
			out:       "Server Version: 0.3.2 (Deployment oaat-operator-system/oaat-operator-controller-manager)\n",
		},
		{
			name:   "another minor version warns",
			client: "0.3.0",
			operators: []Operator{
				{Namespace: "a", Name: "m", Version: "0.3.0"},
				{Namespace: "b", Name: "m", Version: "0.4.1"},
			},
			out: "Server Version: 0.3.0 (Deployment a/m)\nServer Version: 0.4.1 (Deployment b/m)\n",
			warnings: "WARNING: the plugin (0.3) and the operator of Deployment b/m (0.4) differ in their minor version: " +
				"use the plugin of the operator's release\n",
		},
		{
			name:      "a Deployment without the label",
			client:    "0.3.0",
			operators: []Operator{{Namespace: "a", Name: "m"}},
			out:       "Server Version: unknown (Deployment a/m, without the label app.kubernetes.io/version)\n",
		},
		{
			name:      "a plugin of a plain go build is not compared",
			client:    version.Unknown,
			operators: []Operator{{Namespace: "a", Name: "m", Version: "0.4.0"}},
			out:       "Server Version: 0.4.0 (Deployment a/m)\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, warnings bytes.Buffer
			WriteServerVersions(&out, &warnings, tc.client, tc.operators)
			if out.String() != tc.out {
				t.Errorf("out:\n%s\nwant:\n%s", out.String(), tc.out)
			}
			if warnings.String() != tc.warnings {
				t.Errorf("warnings:\n%s\nwant:\n%s", warnings.String(), tc.warnings)
			}
		})
	}
}
