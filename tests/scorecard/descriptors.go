package main

import (
	"fmt"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const descriptorsCompleteTest = "oaat-descriptors-complete"

// describedAsAWhole lists, per kind, the fields whose value is a Kubernetes type that the API
// embeds whole (a PodTemplateSpec, metav1.Conditions, a LabelSelector): their own fields are Kubernetes', and one
// descriptor describes the field. Every other field of spec and status, at any depth, is the
// project's own and needs a descriptor.
var describedAsAWhole = map[string][]string{
	"OaatType": {"spec.template"},
	// A label selector, as ClusterOaatLock's, for the claims that are items.
	"OaatGroup": {"status.conditions", "spec.oaatItemsFrom[0].persistentVolumeClaims.selector"},
	// A label selector, which the console edits as one (its selector x-descriptor).
	"ClusterOaatLock": {"spec.namespaceSelector"},
}

// The x-descriptors the console understands, by the kind of descriptor (openshift/console,
// packages/operator-lifecycle-manager/src/components/descriptors/types.ts). A URN ending in ':'
// is a prefix.
var (
	specXDescriptors = []string{
		"urn:alm:descriptor:com.tectonic.ui:podCount",
		"urn:alm:descriptor:com.tectonic.ui:endpointList",
		"urn:alm:descriptor:com.tectonic.ui:label",
		"urn:alm:descriptor:com.tectonic.ui:resourceRequirements",
		"urn:alm:descriptor:com.tectonic.ui:selector:",
		"urn:alm:descriptor:com.tectonic.ui:namespaceSelector",
		"urn:alm:descriptor:io.kubernetes:",
		"urn:alm:descriptor:com.tectonic.ui:booleanSwitch",
		"urn:alm:descriptor:com.tectonic.ui:password",
		"urn:alm:descriptor:com.tectonic.ui:checkbox",
		"urn:alm:descriptor:com.tectonic.ui:imagePullPolicy",
		"urn:alm:descriptor:com.tectonic.ui:updateStrategy",
		"urn:alm:descriptor:com.tectonic.ui:text",
		"urn:alm:descriptor:com.tectonic.ui:number",
		"urn:alm:descriptor:com.tectonic.ui:nodeAffinity",
		"urn:alm:descriptor:com.tectonic.ui:podAffinity",
		"urn:alm:descriptor:com.tectonic.ui:podAntiAffinity",
		"urn:alm:descriptor:com.tectonic.ui:fieldGroup:",
		"urn:alm:descriptor:com.tectonic.ui:arrayFieldGroup:",
		"urn:alm:descriptor:com.tectonic.ui:select:",
		"urn:alm:descriptor:com.tectonic.ui:advanced",
		"urn:alm:descriptor:com.tectonic.ui:fieldDependency:",
		"urn:alm:descriptor:com.tectonic.ui:hidden",
	}
	statusXDescriptors = []string{
		"urn:alm:descriptor:com.tectonic.ui:podStatuses",
		"urn:alm:descriptor:com.tectonic.ui:podCount",
		"urn:alm:descriptor:org.w3:link",
		"urn:alm:descriptor:io.kubernetes.conditions",
		"urn:alm:descriptor:text",
		"urn:alm:descriptor:prometheusEndpoint",
		"urn:alm:descriptor:io.kubernetes.phase",
		"urn:alm:descriptor:io.kubernetes.phase:reason",
		"urn:alm:descriptor:io.kubernetes:",
		"urn:alm:descriptor:com.tectonic.ui:hidden",
	}
)

// descriptor is what the check needs of a spec or a status descriptor.
type descriptor struct {
	displayName, description string
	xDescriptors             []string
}

// checkDescriptors checks that every field of spec and status of each owned CRD has a descriptor
// with a display name, a description and at least one x-descriptor the console knows for that
// kind of descriptor, and that every descriptor's path is a field of the CRD. The built-in
// olm-spec-descriptors and olm-status-descriptors tests only look at the fields that the
// alm-examples happen to set, and not at x-descriptors.
func checkDescriptors(b *bundle) ([]string, string) {
	var problems, logs []string
	for _, owned := range b.csv.Spec.CustomResourceDefinitions.Owned {
		group := owned.Name[strings.Index(owned.Name, ".")+1:]
		crd, version := b.crdVersion(group, owned.Kind, owned.Version)
		if crd == nil || version == nil || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			problems = append(problems, fmt.Sprintf("owned CRD %s version %s: no such CRD version with a schema in the bundle", owned.Name, owned.Version))
			continue
		}
		root := version.Schema.OpenAPIV3Schema
		wholes := map[string]bool{}
		for _, path := range describedAsAWhole[owned.Kind] {
			wholes[path] = true
		}

		specDescs := map[string]descriptor{}
		for _, d := range owned.SpecDescriptors {
			specDescs[d.Path] = descriptor{d.DisplayName, d.Description, d.XDescriptors}
		}
		statusDescs := map[string]descriptor{}
		for _, d := range owned.StatusDescriptors {
			statusDescs[d.Path] = descriptor{d.DisplayName, d.Description, d.XDescriptors}
		}

		for _, part := range []struct {
			name     string
			descs    map[string]descriptor
			allowed  []string
			descKind string
		}{
			{"spec", specDescs, specXDescriptors, "spec descriptor"},
			{"status", statusDescs, statusXDescriptors, "status descriptor"},
		} {
			label := fmt.Sprintf("%s %s", owned.Kind, part.name)
			partSchema, ok := root.Properties[part.name]
			if !ok {
				if len(part.descs) > 0 {
					problems = append(problems, fmt.Sprintf("%s: %ss but the CRD has no %s", label, part.descKind, part.name))
				}
				continue
			}
			fields := schemaFields(&partSchema, part.name, "", wholes)
			for _, path := range fields {
				d, ok := part.descs[path]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s field %q has no %s", label, path, part.descKind))
					continue
				}
				problems = append(problems, checkDescriptor(label, path, d, part.allowed, part.descKind)...)
			}
			paths := make([]string, 0, len(part.descs))
			for path := range part.descs {
				paths = append(paths, path)
			}
			sort.Strings(paths)
			for _, path := range paths {
				if !pathExists(&partSchema, path) {
					problems = append(problems, fmt.Sprintf("%s: the %s path %q is not a field of the CRD", label, part.descKind, path))
				}
			}
			logs = append(logs, fmt.Sprintf("%s: %d fields, %d %ss", label, len(fields), len(part.descs), part.descKind))
		}
	}
	return problems, strings.Join(logs, "\n")
}

func checkDescriptor(label, path string, d descriptor, allowed []string, descKind string) []string {
	var problems []string
	if strings.TrimSpace(d.displayName) == "" {
		problems = append(problems, fmt.Sprintf("%s field %q: the %s has no displayName", label, path, descKind))
	}
	if strings.TrimSpace(d.description) == "" {
		problems = append(problems, fmt.Sprintf("%s field %q: the %s has no description", label, path, descKind))
	}
	if len(d.xDescriptors) == 0 {
		problems = append(problems, fmt.Sprintf("%s field %q: the %s has no x-descriptors", label, path, descKind))
	}
	for _, x := range d.xDescriptors {
		if !knownXDescriptor(x, allowed) {
			problems = append(problems, fmt.Sprintf("%s field %q: x-descriptor %q is not one of a %s", label, path, x, descKind))
		}
	}
	return problems
}

func knownXDescriptor(x string, allowed []string) bool {
	for _, a := range allowed {
		if x == a || (strings.HasSuffix(a, ":") && strings.HasPrefix(x, a) && len(x) > len(a)) {
			return true
		}
	}
	return false
}

// schemaFields lists the descriptor paths of the fields under s (the schema of spec or status,
// named part), depth first: an object's properties by name, an array of objects' item
// properties as "<array>[0].<field>", as operator-sdk writes descriptor paths. The fields in
// wholes ("spec.template") are listed without their own fields.
func schemaFields(s *apiextensionsv1.JSONSchemaProps, part, prefix string, wholes map[string]bool) []string {
	var fields []string
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		child := s.Properties[name]
		path := prefix + name
		fields = append(fields, path)
		if wholes[part+"."+path] {
			continue
		}
		switch {
		case child.Type == "object" && len(child.Properties) > 0:
			fields = append(fields, schemaFields(&child, part, path+".", wholes)...)
		case child.Type == "array" && child.Items != nil && child.Items.Schema != nil && len(child.Items.Schema.Properties) > 0:
			fields = append(fields, schemaFields(child.Items.Schema, part, path+"[0].", wholes)...)
		}
	}
	return fields
}

// pathExists tells whether the descriptor path ("a.b[0].c") names a field under s.
func pathExists(s *apiextensionsv1.JSONSchemaProps, path string) bool {
	for _, segment := range strings.Split(path, ".") {
		name, isItem := strings.CutSuffix(segment, "[0]")
		child, ok := s.Properties[name]
		if !ok {
			return false
		}
		s = &child
		if isItem {
			if s.Type != "array" || s.Items == nil || s.Items.Schema == nil {
				return false
			}
			s = s.Items.Schema
		}
	}
	return true
}
