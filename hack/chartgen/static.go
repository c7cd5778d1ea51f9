package main

import (
	"bytes"
	"embed"
	"io/fs"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// static holds the chart's files that are written by hand (all: embeds _helpers.tpl too):
// Chart.yaml and values.yaml are text/templates with [[ ]] delimiters (Helm's own braces pass
// through), filled from the release's version and install.yaml's Deployment.
//
//go:embed all:chart
var static embed.FS

// staticValues fill Chart.yaml and values.yaml.
type staticValues struct {
	Version, KubeVersion string
	Replicas             int
	Repository, Digest   string
	// Resources is the manager's resources as YAML indented under values.yaml's resources key.
	Resources string
}

func staticFiles(opts options, d deploymentDefaults) (chartFiles, error) {
	resources, err := yaml.Marshal(d.resources)
	if err != nil {
		return nil, err
	}
	values := staticValues{
		Version: opts.version, KubeVersion: opts.kubeVersion,
		Replicas: d.replicas, Repository: d.repository, Digest: d.digest,
		Resources: indentLines(strings.TrimSuffix(string(resources), "\n"), "  ") + "\n",
	}
	files := chartFiles{}
	err = fs.WalkDir(static, "chart", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		text, err := static.ReadFile(path)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path, "chart/")
		if name == "Chart.yaml" || name == "values.yaml" {
			t, err := template.New(name).Delims("[[", "]]").Option("missingkey=error").Parse(string(text))
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := t.Execute(&out, values); err != nil {
				return err
			}
			text = out.Bytes()
		}
		files[name] = text
		return nil
	})
	return files, err
}
