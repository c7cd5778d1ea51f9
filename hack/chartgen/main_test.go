package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// install is a small install.yaml of kustomize's shape: a Namespace, a CRD, the Deployment, the
// objects a value gates, and a dashboard whose braces are Grafana's.
const install = `apiVersion: v1
kind: Namespace
metadata:
  name: oaat-operator-system
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: oaatgroups.oaat.io
spec:
  group: oaat.io   # kept as written, comment included
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
    app.kubernetes.io/managed-by: kustomize
  name: oaat-operator-manager-rolebinding
subjects:
- kind: ServiceAccount
  name: oaat-operator-controller-manager
  namespace: oaat-operator-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: oaat-operator-grafana-dashboard
  namespace: oaat-operator-system
data:
  oaat-operator.json: '{"legendFormat": "{{group}} running"}'
---
apiVersion: v1
kind: Service
metadata:
  name: oaat-operator-controller-manager-metrics-service
  namespace: oaat-operator-system
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: oaat-operator-controller-manager
  namespace: oaat-operator-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: oaat-operator-controller-manager
  namespace: oaat-operator-system
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: manager
        image: quay.io/oaat-io/oaat-operator@sha256:0123
        env:
        - name: WATCH_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.annotations['olm.targetNamespaces']
        resources:
          limits:
            memory: 256Mi
`

const monitoring = `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: oaat-operator-controller-manager-metrics-monitor
  namespace: oaat-operator-system
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: oaat-operator-controller-manager-alerts
  namespace: oaat-operator-system
spec:
  groups:
  - rules:
    - annotations:
        summary: 'Item {{ $labels.item }} keeps failing'
`

func TestChart(t *testing.T) {
	files, err := chart(options{version: "1.2.3", kubeVersion: "1.30.0"}, []byte(install), []byte(monitoring))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"crds/oaatgroups.oaat.io.yaml": {"  group: oaat.io   # kept as written, comment included\n"},
		"templates/clusterrolebinding-manager-rolebinding.yaml": {
			"app.kubernetes.io/managed-by: {{ .Release.Service }}\n", "  namespace: {{ .Release.Namespace }}\n",
		},
		"templates/configmap-grafana-dashboard.yaml": {`{{ "{{" }}group}} running`},
		"templates/service-controller-manager-metrics-service.yaml": {
			"{{- if .Values.metrics.service.enabled }}\n", "\n{{- end }}\n",
		},
		"templates/poddisruptionbudget-controller-manager.yaml":            {"{{- if gt (int .Values.replicaCount) 1 }}\n"},
		"templates/servicemonitor-controller-manager-metrics-monitor.yaml": {"{{- if .Values.metrics.serviceMonitor.enabled }}\n"},
		"templates/prometheusrule-controller-manager-alerts.yaml": {
			"{{- if .Values.prometheusRule.enabled }}\n", `Item {{ "{{" }} $labels.item }} keeps failing`,
		},
		"templates/deployment-controller-manager.yaml": {
			"  replicas: {{ .Values.replicaCount }}\n",
			"        image: {{ include \"oaat-operator.image\" . | quote }}\n",
			"        resources:\n          {{- toYaml .Values.resources | nindent 10 }}\n",
			"          {{- if .Values.watchNamespaces }}\n" +
				"          value: {{ join \",\" .Values.watchNamespaces | quote }}\n" +
				"          {{- else }}\n" +
				"          valueFrom:\n" +
				"            fieldRef:\n" +
				"              fieldPath: metadata.annotations['olm.targetNamespaces']\n" +
				"          {{- end }}\n",
		},
		"Chart.yaml":  {"version: 1.2.3\n", "appVersion: \"1.2.3\"\n", "kubeVersion: \">= 1.30.0-0\"\n"},
		"values.yaml": {"replicaCount: 2\n", "  repository: quay.io/oaat-io/oaat-operator\n  digest: sha256:0123\n", "resources:\n  limits:\n    memory: 256Mi\n"},
	} {
		text, ok := files[name]
		if !ok {
			t.Errorf("no %s", name)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(text), w) {
				t.Errorf("%s has no %q:\n%s", name, w, text)
			}
		}
	}
	_, crd, _ := strings.Cut(install, "---\napiVersion: apiextensions.k8s.io/v1\n")
	if got := string(files["crds/oaatgroups.oaat.io.yaml"]); !strings.HasPrefix("apiVersion: apiextensions.k8s.io/v1\n"+crd, got) {
		t.Errorf("the CRD is not install.yaml's text:\n%s", got)
	}
	for name, text := range files {
		if strings.Contains(string(text), "OAAT_CHART_") || strings.Contains(string(text), "oaat-operator-system") {
			t.Errorf("%s keeps a placeholder or install.yaml's namespace:\n%s", name, text)
		}
		if strings.HasPrefix(name, "templates/namespace") {
			t.Errorf("%s: the chart installs into the release's namespace, it makes none", name)
		}
	}
}

func TestChartRefuses(t *testing.T) {
	const pdb = "PodDisruptionBudget/oaat-operator-controller-manager"
	for _, c := range []struct {
		name, install string
		absent        []string
		want          string
	}{
		{"an image by tag", strings.Replace(install, "@sha256:0123", ":v1", 1), nil, "is not named by digest"},
		{"a gated object gone", strings.Replace(install, "kind: PodDisruptionBudget", "kind: ConfigMap", 1), nil, "no object PodDisruptionBudget/"},
		{"a gated object said absent and there", install, []string{pdb}, pdb + " is said to be absent, and install.yaml has it"},
		{"no WATCH_NAMESPACE", strings.Replace(install, "WATCH_NAMESPACE", "OTHER", 1), nil, "no WATCH_NAMESPACE"},
		{"an object twice", install + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: oaat-operator-controller-manager-metrics-service\n", nil, "two objects would be written to templates/service-"},
		{"two Deployments", install + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n", nil, "a second Deployment, other"},
	} {
		if _, err := chart(options{version: "1.2.3", kubeVersion: "1.30.0", absent: c.absent}, []byte(c.install), []byte(monitoring)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestChartAbsent: an older release without the PodDisruptionBudget, said absent, gives a chart
// without it.
func TestChartAbsent(t *testing.T) {
	const pdb = "PodDisruptionBudget/oaat-operator-controller-manager"
	older := strings.Replace(install, "kind: PodDisruptionBudget", "kind: ConfigMap", 1)
	files, err := chart(options{version: "0.2.0", kubeVersion: "1.30.0", absent: []string{pdb}}, []byte(older), []byte(monitoring))
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if strings.HasPrefix(name, "templates/poddisruptionbudget") {
			t.Errorf("%s written for a release said to lack it", name)
		}
	}
	if _, ok := files["templates/configmap-controller-manager.yaml"]; !ok {
		t.Errorf("the ConfigMap standing in for the budget is not in the chart: %v", slices.Sorted(maps.Keys(files)))
	}
}
