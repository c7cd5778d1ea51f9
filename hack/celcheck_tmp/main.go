package main

import (
	"github.com/oaat-io/oaat-operator/internal/schedule"
	"bufio"
	"context"
	"fmt"
	"os"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"sigs.k8s.io/yaml"
)

func main() {
	data, _ := os.ReadFile("config/crd/bases/oaat.io_oaatgroups.yaml")
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil { panic(err) }
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil { panic(err) }
	s, err := schema.NewStructural(&internal)
	if err != nil { panic(err) }
	if os.Getenv("COST") != "" {
		costs(s, "")
		return
	}
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		obj := map[string]interface{}{"apiVersion": "oaat.io/v1alpha1", "kind": "OaatGroup", "metadata": map[string]interface{}{"name": "x"},
			"spec": map[string]interface{}{"oaatType": "t", "oaatItems": []interface{}{"a"}, os.Args[1]: line}}
		errs, _ := v.Validate(context.Background(), field.NewPath(""), s, obj, nil, celconfig.RuntimeCELCostBudget)
		_, perr := schedule.ParseCalendar(line, "", 0, "x")
		if (len(errs) == 0) != (perr == nil) || os.Getenv("ALL") != "" {
			fmt.Printf("%q\tadmission: %v\toperator: %v\n", line, errs.ToAggregate(), perr)
		}
	}
}

func costs(s *schema.Structural, path string) {
	if len(s.XValidations) > 0 {
		res, err := cel.Compile(s, model.SchemaDeclType(s, path == ""), celconfig.PerCallLimit, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.NewExpressionsEnvLoader())
		if err != nil { fmt.Println(path, err) }
		for i, r := range res {
			if r.Error != nil { fmt.Println(path, i, r.Error) }
			fmt.Printf("%s rule %d: maxCost %d cardinality %d msgCost %d\n", path, i, r.MaxCost, r.MaxCardinality, r.MessageExpressionMaxCost)
		}
	}
	for k, p := range s.Properties { p := p; costs(&p, path+"."+k) }
	if s.Items != nil { costs(s.Items, path+"[]") }
}

