package statusview

import (
	"fmt"
	"io"

	"github.com/oaat-io/oaat-operator/internal/version"
)

// Operator is an installation of the operator a cluster runs: its manager's Deployment and the
// version that Deployment's label says (empty without the label).
type Operator struct {
	// Namespace and Name name the Deployment.
	Namespace, Name string
	// Version is its label app.kubernetes.io/version.
	Version string
}

// WriteClientVersion writes the plugin's version, as kubectl version writes its client's.
func WriteClientVersion(w io.Writer, client version.Info) {
	fmt.Fprintf(w, "Client Version: %s\n", client)
}

// WriteServerVersions writes a line per operator to out, and to warnings a line per operator
// whose minor version differs from the plugin's, client: the plugin may then show or ask what
// that operator does not (an unknown version, of a plain go build or of a Deployment without the
// label, is not compared).
func WriteServerVersions(out, warnings io.Writer, client string, operators []Operator) {
	for _, o := range operators {
		where := "Deployment " + o.Namespace + "/" + o.Name
		if o.Version == "" {
			fmt.Fprintf(out, "Server Version: %s (%s, without the label app.kubernetes.io/version)\n", version.Unknown, where)
			continue
		}
		fmt.Fprintf(out, "Server Version: %s (%s)\n", o.Version, where)
		clientMinor, clientOK := version.Minor(client)
		serverMinor, serverOK := version.Minor(o.Version)
		if clientOK && serverOK && clientMinor != serverMinor {
			fmt.Fprintf(warnings, "WARNING: the plugin (%s) and the operator of %s (%s) differ in their minor version: "+
				"use the plugin of the operator's release\n", clientMinor, where, serverMinor)
		}
	}
}
