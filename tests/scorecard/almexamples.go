package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

const almExamplesValidTest = "oaat-alm-examples-valid"

// checkALMExamples checks that every alm-example would be accepted by its CRD, in the order the
// API server applies them on create: unknown fields are refused (strict field validation, as
// kubectl and the console use), defaults are applied, then the OpenAPI schema, the list types
// (sets and maps without duplicates) and the CEL rules are checked. It also checks that every owned CRD has an example. The examples are what the
// console offers users as a starting point: one the API server refuses is a broken first step.
func checkALMExamples(b *bundle) ([]string, string) {
	raw, ok := b.csv.Annotations["alm-examples"]
	if !ok || strings.TrimSpace(raw) == "" {
		return []string{"the CSV has no alm-examples annotation"}, ""
	}
	// Decoded as the API server decodes a request: whole numbers as int64, which CEL rules on
	// integer fields need.
	var list []any
	if err := utiljson.Unmarshal([]byte(raw), &list); err != nil {
		return []string{fmt.Sprintf("the alm-examples annotation is not a JSON list of objects: %v", err)}, ""
	}
	examples := make([]map[string]any, 0, len(list))
	for i, item := range list {
		example, ok := item.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("alm-examples[%d] is not a JSON object", i)}, ""
		}
		examples = append(examples, example)
	}

	var problems, checked []string
	exampled := map[string]bool{} // "<kind>.<group>/<version>" of the examples
	for i, example := range examples {
		obj := &unstructured.Unstructured{Object: example}
		label := fmt.Sprintf("alm-examples[%d] (%s %q)", i, obj.GetKind(), obj.GetName())
		gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: apiVersion %q: %v", label, obj.GetAPIVersion(), err))
			continue
		}
		crd, version := b.crdVersion(gv.Group, obj.GetKind(), gv.Version)
		switch {
		case crd == nil:
			problems = append(problems, fmt.Sprintf("%s: the bundle has no CRD for kind %s of group %s", label, obj.GetKind(), gv.Group))
			continue
		case version == nil:
			problems = append(problems, fmt.Sprintf("%s: CRD %s has no version %s", label, crd.Name, gv.Version))
			continue
		case !version.Served:
			problems = append(problems, fmt.Sprintf("%s: version %s of CRD %s is not served", label, gv.Version, crd.Name))
			continue
		}
		exampled[obj.GetKind()+"."+gv.Group+"/"+gv.Version] = true
		for _, p := range validateExample(crd, version, obj) {
			problems = append(problems, label+": "+p)
		}
		checked = append(checked, label)
	}

	for _, owned := range b.csv.Spec.CustomResourceDefinitions.Owned {
		group := owned.Name[strings.Index(owned.Name, ".")+1:]
		if !exampled[owned.Kind+"."+group+"/"+owned.Version] {
			problems = append(problems, fmt.Sprintf("owned CRD %s (kind %s, version %s) has no alm-example", owned.Name, owned.Kind, owned.Version))
		}
	}
	sort.Strings(checked)
	return problems, "Checked against their CRDs: " + strings.Join(checked, ", ")
}

// validateExample returns why the API server would refuse to create obj with the schema of
// version of crd, if it would.
func validateExample(crd *apiextensionsv1.CustomResourceDefinition, version *apiextensionsv1.CustomResourceDefinitionVersion, obj *unstructured.Unstructured) []string {
	if version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		return []string{fmt.Sprintf("version %s of CRD %s has no schema", version.Name, crd.Name)}
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		return []string{fmt.Sprintf("converting the schema of CRD %s: %v", crd.Name, err)}
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return []string{fmt.Sprintf("the schema of CRD %s is not structural: %v", crd.Name, err)}
	}

	var problems []string
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	if obj.GetName() == "" {
		problems = append(problems, "metadata.name is empty")
	} else {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(obj.GetName(), false) {
			problems = append(problems, fmt.Sprintf("metadata.name %q: %s", obj.GetName(), msg))
		}
	}
	if !namespaced && obj.GetNamespace() != "" {
		problems = append(problems, fmt.Sprintf("CRD %s is cluster-scoped but the example has a namespace", crd.Name))
	}

	content := runtime.DeepCopyJSON(obj.Object)
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	for _, path := range pruning.PruneWithOptions(content, structural, true, opts) {
		problems = append(problems, fmt.Sprintf("unknown field %q", path))
	}
	defaulting.Default(content, structural)

	validator, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		return append(problems, fmt.Sprintf("building the schema validator of CRD %s: %v", crd.Name, err))
	}
	for _, e := range validation.ValidateCustomResource(nil, content, validator) {
		problems = append(problems, e.Error())
	}
	for _, e := range listtype.ValidateListSetsAndMaps(nil, structural, content) {
		problems = append(problems, e.Error())
	}

	if celValidator := cel.NewValidator(structural, true, celconfig.PerCallLimit); celValidator != nil {
		errs, _ := celValidator.Validate(context.Background(), nil, structural, content, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range errs {
			problems = append(problems, "CEL rule: "+e.Error())
		}
	}
	return problems
}
