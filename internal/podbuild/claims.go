package podbuild

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// substitutesItem reports whether s holds a placeholder of Substitute.
func substitutesItem(s string) bool {
	return strings.Contains(s, placeholder) || strings.Contains(s, legacyPlaceholder)
}

// substituteClaimNames replaces the placeholders in the claimName of every volume that mounts a
// PersistentVolumeClaim, so that one template mounts each item's claim in turn. It uses the
// replacer of the containers' strings: its $ escape never shows in a valid claim name, since a
// name with a $ is refused first (CheckItem).
func substituteClaimNames(volumes []corev1.Volume, replacer *strings.Replacer) {
	for i := range volumes {
		if pvc := volumes[i].PersistentVolumeClaim; pvc != nil {
			pvc.ClaimName = replacer.Replace(pvc.ClaimName)
		}
	}
}

// CheckItem returns why item cannot run with the pod template, nil when it can: where the template
// substitutes the item into a volume's claimName, the result must be a valid claim name (a DNS-1123
// subdomain), else the API server would refuse the pod.
func CheckItem(template *corev1.PodTemplateSpec, item string) error {
	for _, v := range template.Spec.Volumes {
		pvc := v.PersistentVolumeClaim
		if pvc == nil || !substitutesItem(pvc.ClaimName) {
			continue
		}
		name := Substitute(pvc.ClaimName, item)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("item %q makes claimName %q of volume %s, not a valid claim name: %s",
				item, name, v.Name, strings.Join(errs, "; "))
		}
	}
	return nil
}
