package support

import (
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The OLM kinds, read as unstructured objects by the OLM suites: that spares the module a
// dependency on github.com/operator-framework/api.
var (
	GVRCatalogSource            = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}
	GVRSubscription             = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
	GVRInstallPlan              = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	GVRClusterServiceVersion    = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	GVROperatorGroup            = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1", Resource: "operatorgroups"}
	GVRCustomResourceDefinition = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// OwnedCRDs are the names of the CRDs the operator's bundle owns, one per file in
// config/crd/bases (a unit test keeps the two equal), sorted.
var OwnedCRDs = []string{
	"clusteroaatlocks.oaat.io", "oaatgrouphistories.oaat.io", "oaatgroups.oaat.io", "oaatlocks.oaat.io", "oaatruns.oaat.io", "oaattypes.oaat.io",
}

// MonitoringCRDFiles are the files, in the Prometheus Operator's example/prometheus-operator-crd,
// of the two monitoring.coreos.com CRDs the bundle needs: it ships a ServiceMonitor and a
// PrometheusRule, and OLM installs it only where their CRDs exist.
var MonitoringCRDFiles = []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"}

// InstallMode is one way to install the operator through OLM: an OperatorGroup in
// InstallNamespace with TargetNamespaces (nil: all namespaces). The operator then runs a group in
// each of WorkNamespaces, which it watches, and in OutsideNamespace (if any), which it does not
// watch and must leave alone.
type InstallMode struct {
	Name             string
	InstallNamespace string
	TargetNamespaces []string
	WorkNamespaces   []string
	OutsideNamespace string
}

// InstallModes returns the CSV's four install modes, each with namespaces of its own:
// AllNamespaces installed in installPrefix, OwnNamespace in installPrefix-own, SingleNamespace in
// installPrefix-single targeting workPrefix-single, MultiNamespace in installPrefix-multi targeting
// workPrefix-multi-a and -b; every mode with targets has an outside namespace
// workPrefix-<mode>-outside.
func InstallModes(installPrefix, workPrefix string) []InstallMode {
	own := installPrefix + "-own"
	single := []string{workPrefix + "-single"}
	multi := []string{workPrefix + "-multi-a", workPrefix + "-multi-b"}
	return []InstallMode{
		{Name: "AllNamespaces", InstallNamespace: installPrefix, WorkNamespaces: []string{workPrefix + "-all"}},
		{Name: "OwnNamespace", InstallNamespace: own, TargetNamespaces: []string{own}, WorkNamespaces: []string{own},
			OutsideNamespace: workPrefix + "-own-outside"},
		{Name: "SingleNamespace", InstallNamespace: installPrefix + "-single", TargetNamespaces: single, WorkNamespaces: single,
			OutsideNamespace: workPrefix + "-single-outside"},
		{Name: "MultiNamespace", InstallNamespace: installPrefix + "-multi", TargetNamespaces: multi, WorkNamespaces: multi,
			OutsideNamespace: workPrefix + "-multi-outside"},
	}
}

// Namespaces returns every namespace the mode uses, each once, sorted.
func (m InstallMode) Namespaces() []string {
	all := append([]string{m.InstallNamespace}, m.TargetNamespaces...)
	all = append(all, m.WorkNamespaces...)
	if m.OutsideNamespace != "" {
		all = append(all, m.OutsideNamespace)
	}
	sort.Strings(all)
	return slices.Compact(all)
}

// ExpectedTargets is the set of namespaces OLM's olm.targetNamespaces annotation must list for
// the mode, sorted: "" alone for all namespaces.
func (m InstallMode) ExpectedTargets() []string {
	if len(m.TargetNamespaces) == 0 {
		return []string{""}
	}
	t := slices.Clone(m.TargetNamespaces)
	sort.Strings(t)
	return t
}

// ParseObject parses a YAML manifest, a format for fmt.Sprintf, into an unstructured object.
func ParseObject(format string, args ...any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(fmt.Sprintf(format, args...)), &u.Object); err != nil {
		return nil, fmt.Errorf("parsing a manifest: %w", err)
	}
	return u, nil
}

// OperatorGroup is an OperatorGroup named name in namespace whose target namespaces are targets
// (nil: all namespaces).
func OperatorGroup(name, namespace string, targets []string) *unstructured.Unstructured {
	spec := map[string]any{}
	if len(targets) > 0 {
		t := make([]any, 0, len(targets))
		for _, n := range targets {
			t = append(t, n)
		}
		spec["targetNamespaces"] = t
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1",
		"kind":       "OperatorGroup",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec":       spec,
	}}
}

// Subscription subscribes, with automatic approval, to a package's channel of a CatalogSource.
type Subscription struct {
	Name, Namespace                 string
	Package, Channel                string
	CatalogSource, CatalogNamespace string
	// StartingCSV, when set, is the CSV to install first (an older one, to upgrade from).
	StartingCSV string
}

// Object is the Subscription as an unstructured object.
func (s Subscription) Object() *unstructured.Unstructured {
	spec := map[string]any{
		"channel": s.Channel, "name": s.Package, "source": s.CatalogSource, "sourceNamespace": s.CatalogNamespace,
		"installPlanApproval": "Automatic",
	}
	if s.StartingCSV != "" {
		spec["startingCSV"] = s.StartingCSV
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "Subscription",
		"metadata":   map[string]any{"name": s.Name, "namespace": s.Namespace},
		"spec":       spec,
	}}
}
