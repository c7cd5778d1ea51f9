// Command chartgen writes the release's Helm chart from the objects config/ builds, so that the
// chart cannot drift from install.yaml (make release; docs/install.md#helm):
//
//   - crds/: install.yaml's CustomResourceDefinitions, byte for byte (Helm installs them once and
//     never upgrades or deletes them: an upgrade applies them first, an uninstall keeps them and
//     so the groups and their history);
//   - templates/: every other object of install.yaml but its Namespace (the release's namespace is
//     the user's, created and labelled before the install), and the ServiceMonitor and
//     PrometheusRule of config/prometheus, each behind a value; what a value sets is the only
//     difference from install.yaml (templates.go);
//   - Chart.yaml, values.yaml (its defaults read from the same objects), values.schema.json,
//     NOTES.txt (chart/).
//
// Usage: chartgen -version X.Y.Z -kube-version 1.30.0 -install install.yaml -monitoring
// monitoring.yaml -out DIR [-absent KIND/NAME]...; it writes DIR/oaat-operator/. -absent names a
// gated object an older release lacks (0.2.0 has no PodDisruptionBudget): without it, a gated
// object missing from install.yaml is an error.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var opts options
	flag.StringVar(&opts.version, "version", "", "the release's version, X.Y.Z (the chart's version and appVersion)")
	flag.StringVar(&opts.kubeVersion, "kube-version", "", "the oldest Kubernetes the release supports (the CSV's minKubeVersion)")
	install := flag.String("install", "", "install.yaml: kustomize build config/default, the operator image named by digest")
	monitoring := flag.String("monitoring", "", "kustomize build config/chart: the optional monitoring objects")
	out := flag.String("out", "", "the directory to write the chart's directory into")
	flag.Func("absent", "a gated object, KIND/NAME, the release lacks (an older release's; repeatable)", func(gated string) error {
		if _, ok := gates[gated]; !ok {
			return fmt.Errorf("%s is not an object a value turns on or off", gated)
		}
		opts.absent = append(opts.absent, gated)
		return nil
	})
	flag.Parse()
	if opts.version == "" || opts.kubeVersion == "" || *install == "" || *monitoring == "" || *out == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(opts, *install, *monitoring, *out); err != nil {
		fmt.Fprintln(os.Stderr, "chartgen:", err)
		os.Exit(1)
	}
}

func run(opts options, installFile, monitoringFile, out string) error {
	install, err := os.ReadFile(installFile)
	if err != nil {
		return err
	}
	monitoring, err := os.ReadFile(monitoringFile)
	if err != nil {
		return err
	}
	files, err := chart(opts, install, monitoring)
	if err != nil {
		return err
	}
	return files.write(out)
}
