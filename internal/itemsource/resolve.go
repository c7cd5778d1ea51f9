// Package itemsource works out a group's items: those of its spec, then those of its sources
// (ConfigMaps, PersistentVolumeClaims), in order, without duplicates. It is pure: the objects are
// read by the caller.
package itemsource

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

const (
	// MaxItems is the most items a group has; further ones are skipped.
	MaxItems = 1000
	// maxItemLength is the longest an item may be (it is an annotation value and an env value).
	maxItemLength = 253
)

// Objects are the objects of the group's namespace that its sources read.
type Objects struct {
	// ConfigMaps are the ConfigMaps named by the sources that exist, by name.
	ConfigMaps map[string]*corev1.ConfigMap
	// Claims are the metadata of the namespace's PersistentVolumeClaims, when a source selects
	// claims (TakesClaims), in any order.
	Claims []metav1.PartialObjectMetadata
}

// Names returns the names of the ConfigMaps the spec takes items from, without duplicates.
func Names(spec *v1alpha1.OaatGroupSpec) []string {
	var names []string
	for _, src := range spec.OaatItemsFrom {
		if src.ConfigMap != nil && !slices.Contains(names, src.ConfigMap.Name) {
			names = append(names, src.ConfigMap.Name)
		}
	}
	return names
}

// Resolve returns the group's items and what was skipped, each problem in a sentence.
func Resolve(spec *v1alpha1.OaatGroupSpec, objects Objects) (items, problems []string) {
	seen := make(map[string]bool, len(spec.OaatItems))
	dropped := 0
	add := func(item string) {
		switch {
		case seen[item]:
		case len(items) >= MaxItems:
			dropped++
		default:
			seen[item] = true
			items = append(items, item)
		}
	}
	for _, item := range spec.OaatItems {
		add(item)
	}
	for i, src := range spec.OaatItemsFrom {
		entries, problem := readSource(src, objects)
		if problem != "" {
			problems = append(problems, fmt.Sprintf("spec.oaatItemsFrom[%d]: %s", i, problem))
		}
		for _, e := range entries {
			if len(e.item) > maxItemLength {
				problems = append(problems, fmt.Sprintf("spec.oaatItemsFrom[%d]: %s is %d characters long, more than %d",
					i, e.where, len(e.item), maxItemLength))
				continue
			}
			add(e.item)
		}
	}
	if dropped > 0 {
		problems = append(problems, fmt.Sprintf("%d more items skipped: a group has at most %d", dropped, MaxItems))
	}
	return items, problems
}

// entry is an item read from a source, and where, for a problem report.
type entry struct {
	item  string
	where string
}

// readSource returns the entries of one source, or why it cannot be read.
func readSource(src v1alpha1.ItemsSource, objects Objects) ([]entry, string) {
	switch {
	case src.ConfigMap != nil:
		return read(*src.ConfigMap, objects.ConfigMaps[src.ConfigMap.Name])
	case src.PersistentVolumeClaims != nil:
		return selectClaims(src.PersistentVolumeClaims.Selector, objects.Claims)
	}
	return nil, "" // no member set: refused at admission
}

// IsSource reports whether the ConfigMap opted in as a source of items: only its label
// v1alpha1.LabelItemSource set to "true" lets the operator copy its data into a group's status.
func IsSource(cm *corev1.ConfigMap) bool {
	return cm.Labels[v1alpha1.LabelItemSource] == "true"
}

// read returns the entries of a ConfigMap source, or why it cannot be read. A ConfigMap that did
// not opt in gives no entry, whatever its data.
func read(src v1alpha1.ConfigMapItems, cm *corev1.ConfigMap) ([]entry, string) {
	if cm == nil {
		return nil, fmt.Sprintf("ConfigMap %s not found", src.Name)
	}
	if !IsSource(cm) {
		return nil, fmt.Sprintf("ConfigMap %s is not an item source: it lacks the label %s=%q", src.Name, v1alpha1.LabelItemSource, "true")
	}
	if src.Key == "" {
		keys := make([]string, 0, len(cm.Data))
		for key := range cm.Data {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		entries := make([]entry, 0, len(keys))
		for _, key := range keys {
			entries = append(entries, entry{item: key, where: fmt.Sprintf("key %q of ConfigMap %s", key, src.Name)})
		}
		return entries, ""
	}
	value, ok := cm.Data[src.Key]
	if !ok {
		return nil, fmt.Sprintf("ConfigMap %s has no key %q", src.Name, src.Key)
	}
	var entries []entry
	for n, line := range strings.Split(value, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		entries = append(entries, entry{item: line, where: fmt.Sprintf("line %d of key %q of ConfigMap %s", n+1, src.Key, src.Name)})
	}
	return entries, ""
}
