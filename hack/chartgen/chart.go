package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// chartName is the chart's name, and the directory its archive holds.
const chartName = "oaat-operator"

type options struct {
	version     string
	kubeVersion string
	// absent are gated objects (kind/name) the release is known to lack: an older release's
	// install.yaml, packaged by today's tooling (make previous-release).
	absent []string
}

// chartFiles are the chart's files by their path in the chart's directory.
type chartFiles map[string][]byte

// write writes the files under out/oaat-operator/, which it empties first.
func (f chartFiles) write(out string) error {
	dir := filepath.Join(out, chartName)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(f)) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// object is one document of kustomize's output: its text as written, and as read.
type object struct {
	text   []byte
	fields map[string]any
}

func (o object) kind() string { return str(o.fields, "kind") }
func (o object) name() string { return str(o.fields, "metadata", "name") }

// documents splits kustomize's output into its objects.
func documents(data []byte) ([]object, error) {
	var objects []object
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(doc, []byte("---\n"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if !bytes.HasSuffix(doc, []byte("\n")) {
			doc = append(doc, '\n')
		}
		o := object{text: doc}
		if err := yaml.Unmarshal(doc, &o.fields); err != nil {
			return nil, fmt.Errorf("reading an object: %w", err)
		}
		if o.kind() == "" || o.name() == "" {
			return nil, fmt.Errorf("an object without kind or name:\n%s", doc)
		}
		objects = append(objects, o)
	}
	return objects, nil
}

// chart builds the chart's files from install.yaml's objects and the optional monitoring ones.
func chart(opts options, install, monitoring []byte) (chartFiles, error) {
	objects, err := documents(install)
	if err != nil {
		return nil, fmt.Errorf("install.yaml: %w", err)
	}
	extra, err := documents(monitoring)
	if err != nil {
		return nil, fmt.Errorf("the monitoring objects: %w", err)
	}
	files := chartFiles{}
	var namespace string
	var defaults *deploymentDefaults
	for _, o := range append(objects, extra...) {
		name := templateFile(o.kind(), o.name())
		var text []byte
		switch o.kind() {
		case "CustomResourceDefinition":
			name, text = "crds/"+o.name()+".yaml", o.text
		case "Namespace":
			namespace = o.name()
			continue
		case "Deployment":
			if defaults != nil {
				return nil, fmt.Errorf("a second Deployment, %s: the values set one", o.name())
			}
			text, defaults, err = deploymentTemplate(o)
		default:
			text, err = objectTemplate(o)
		}
		if err != nil {
			return nil, err
		}
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("two objects would be written to %s", name)
		}
		files[name] = text
	}
	if namespace == "" || defaults == nil {
		return nil, fmt.Errorf("install.yaml has no Namespace or no Deployment")
	}
	for gated := range gates {
		kind, name, _ := strings.Cut(gated, "/")
		_, ok := files[templateFile(kind, name)]
		switch {
		case !ok && !slices.Contains(opts.absent, gated):
			return nil, fmt.Errorf("no object %s, which a value turns on or off", gated)
		case ok && slices.Contains(opts.absent, gated):
			return nil, fmt.Errorf("%s is said to be absent, and install.yaml has it", gated)
		}
	}
	for name, text := range files {
		if strings.HasPrefix(name, "templates/") {
			files[name] = releaseNamespace(text, namespace)
		}
	}
	static, err := staticFiles(opts, *defaults)
	if err != nil {
		return nil, err
	}
	for name, text := range static {
		files[name] = text
	}
	return files, nil
}

// templateFile is the template's path: templates/KIND-NAME.yaml, without the names' common prefix.
func templateFile(kind, name string) string {
	return "templates/" + strings.ToLower(kind) + "-" + strings.TrimPrefix(name, chartName+"-") + ".yaml"
}

// releaseNamespace puts the release's namespace where install.yaml names its own (the objects'
// namespace, the bindings' subjects).
func releaseNamespace(text []byte, namespace string) []byte {
	return bytes.ReplaceAll(text, []byte(": "+namespace+"\n"), []byte(": {{ .Release.Namespace }}\n"))
}

// str is the string at the path of fields, or "".
func str(fields map[string]any, path ...string) string {
	var v any = fields
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[key]
	}
	s, _ := v.(string)
	return s
}
