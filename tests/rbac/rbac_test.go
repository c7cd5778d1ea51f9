// Package rbac checks the rights the operator is given, in the bundle's CSV and in the kustomize
// configurations, without a cluster: namespaced rights never cluster-wide where the operator
// watches only some namespaces, no write on ConfigMaps or PersistentVolumeClaims anywhere, and
// leases limited to the operator's own.
package rbac

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// clusterScoped are the only resources the manager may hold cluster-wide rights on whatever the
// namespaces it watches, with the only verbs allowed on each: the token and access reviews that
// authenticate metrics scrapers; and, a policy decision made for issue 15, which asks for a lock
// shared by groups of several namespaces, the cluster-scoped ClusterOaatLocks (read, and their
// status written) and the labels of Namespaces that a ClusterOaatLock's namespaceSelector
// selects (read only: never a write on a Namespace, never a write on a lock's spec).
var clusterScoped = map[string][]string{
	"authentication.k8s.io/tokenreviews":        {"create"},
	"authorization.k8s.io/subjectaccessreviews": {"create"},
	"oaat.io/clusteroaatlocks":                  {"get", "list", "watch"},
	"oaat.io/clusteroaatlocks/status":           {"update", "patch"},
	"/namespaces":                               {"get", "list", "watch"},
}

// readOnly are the core resources that no role of the operator may write: the item sources,
// whose objects the operator only reads (ConfigMaps, PersistentVolumeClaims).
var readOnly = []string{"configmaps", "persistentvolumeclaims"}

// writeVerbs change objects.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "*"}

// root is the repository's root, from this package's directory.
const root = "../.."

// problems lists what a set of rules grants that it must not. namespacedOK allows namespaced
// resources (rules that OLM or a Role confine to the watched namespaces).
func problems(where string, rules []rbacv1.PolicyRule, namespacedOK bool) []string {
	var out []string
	for _, r := range rules {
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				name := group + "/" + res
				if group == "" {
					name = "core/" + res
				}
				if allowed, ok := clusterScoped[group+"/"+res]; !namespacedOK && !ok {
					out = append(out, fmt.Sprintf("%s: %s %v cluster-wide (only %v may be)", where, name, r.Verbs, slices.Sorted(maps.Keys(clusterScoped))))
				} else if !namespacedOK {
					for _, v := range r.Verbs {
						if !slices.Contains(allowed, v) {
							out = append(out, fmt.Sprintf("%s: %s on %s cluster-wide (only %v may be)", where, v, name, allowed))
						}
					}
				}
				if group == "*" || res == "*" || slices.Contains(r.Verbs, "*") {
					out = append(out, fmt.Sprintf("%s: wildcard rule %+v", where, r))
				}
				if group == "" && (slices.Contains(readOnly, res) || res == "*") {
					for _, v := range r.Verbs {
						if slices.Contains(writeVerbs, v) {
							out = append(out, fmt.Sprintf("%s: %s on %s", where, v, res))
						}
					}
				}
				if group == "coordination.k8s.io" && res == "leases" {
					for _, v := range r.Verbs {
						// create cannot be limited by name: the Lease does not exist yet.
						if v != "create" && !slices.Equal(r.ResourceNames, []string{v1alpha1.LeaderElectionID}) {
							out = append(out, fmt.Sprintf("%s: %s on leases %q, want only the operator's Lease %q",
								where, v, r.ResourceNames, v1alpha1.LeaderElectionID))
						}
					}
				}
			}
		}
	}
	return out
}

// csvPermissions is the part of the CSV this test reads.
type csvPermissions struct {
	Spec struct {
		Install struct {
			Spec struct {
				ClusterPermissions []struct {
					ServiceAccountName string              `json:"serviceAccountName"`
					Rules              []rbacv1.PolicyRule `json:"rules"`
				} `json:"clusterPermissions"`
				Permissions []struct {
					ServiceAccountName string              `json:"serviceAccountName"`
					Rules              []rbacv1.PolicyRule `json:"rules"`
				} `json:"permissions"`
			} `json:"spec"`
		} `json:"install"`
	} `json:"spec"`
}

// TestCSVPermissions: OLM grants clusterPermissions cluster-wide in every install mode, and
// permissions in the operator's and the target namespaces (cluster-wide for AllNamespaces).
func TestCSVPermissions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "bundle", "manifests", "oaat-operator.clusterserviceversion.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var csv csvPermissions
	if err := yaml.Unmarshal(data, &csv); err != nil {
		t.Fatal(err)
	}
	spec := csv.Spec.Install.Spec
	if len(spec.Permissions) == 0 {
		t.Fatal("the CSV has no permissions: the manager's namespaced rights must be there")
	}
	var found []string
	for _, p := range spec.ClusterPermissions {
		found = append(found, problems("clusterPermissions of "+p.ServiceAccountName, p.Rules, false)...)
	}
	for _, p := range spec.Permissions {
		found = append(found, problems("permissions of "+p.ServiceAccountName, p.Rules, true)...)
	}
	for _, p := range found {
		t.Error(p)
	}
	granted := func(resource, verb string) bool {
		for _, p := range spec.Permissions {
			for _, r := range p.Rules {
				if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
					return true
				}
			}
		}
		return false
	}
	for _, need := range [][2]string{{"pods", "create"}, {"pods", "delete"}, {"pods", "deletecollection"}, {"pods", "patch"}, {"configmaps", "get"}, {"persistentvolumeclaims", "list"}, {"persistentvolumeclaims", "watch"}, {"oaatgroups/status", "update"}, {"oaatlocks", "watch"}, {"oaatlocks/status", "update"}, {"leases", "create"}} {
		if !granted(need[0], need[1]) {
			t.Errorf("the CSV's permissions lack %s on %s: the manager needs it", need[1], need[0])
		}
	}
	// ClusterOaatLocks and Namespaces are cluster-scoped: only clusterPermissions can grant them,
	// in OwnNamespace and SingleNamespace installs too.
	grantedCluster := func(resource, verb string) bool {
		for _, p := range spec.ClusterPermissions {
			for _, r := range p.Rules {
				if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
					return true
				}
			}
		}
		return false
	}
	for _, need := range [][2]string{{"clusteroaatlocks", "watch"}, {"clusteroaatlocks/status", "update"}, {"namespaces", "watch"}} {
		if !grantedCluster(need[0], need[1]) {
			t.Errorf("the CSV's clusterPermissions lack %s on %s: the manager needs it", need[1], need[0])
		}
	}
}

// kustomized builds a kustomize directory of config/ and returns its Roles and ClusterRoles by
// name, which of them are bound to the manager's ServiceAccount and how (RoleBinding or
// ClusterRoleBinding), and its Deployments.
type kustomized struct {
	roles        map[string][]rbacv1.PolicyRule // "Role/name" or "ClusterRole/name"
	boundCluster []string                       // roles bound cluster-wide to the manager
	boundInNS    []string                       // roles bound in a namespace to the manager
	deployments  []appsv1.Deployment
}

func build(t *testing.T, dir string) kustomized {
	t.Helper()
	resmap, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", dir))
	if err != nil {
		t.Fatalf("kustomize build config/%s: %v", dir, err)
	}
	out, err := resmap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	k := kustomized{roles: map[string][]rbacv1.PolicyRule{}}
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "Role", "ClusterRole":
			var r rbacv1.ClusterRole // a Role has the same fields
			if err := yaml.Unmarshal(doc, &r); err != nil {
				t.Fatal(err)
			}
			k.roles[head.Kind+"/"+r.Name] = r.Rules
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := yaml.Unmarshal(doc, &b); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
				return s.Kind == rbacv1.ServiceAccountKind && s.Name == "oaat-operator-controller-manager"
			}) {
				continue
			}
			role := b.RoleRef.Kind + "/" + b.RoleRef.Name
			if head.Kind == "ClusterRoleBinding" {
				k.boundCluster = append(k.boundCluster, role)
			} else {
				k.boundInNS = append(k.boundInNS, role)
			}
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil {
				t.Fatal(err)
			}
			k.deployments = append(k.deployments, d)
		}
	}
	return k
}

// watchesAllNamespaces reports whether the manager's Deployment watches every namespace:
// WATCH_NAMESPACE empty or taken from the olm.targetNamespaces annotation, which only OLM sets.
func watchesAllNamespaces(t *testing.T, d appsv1.Deployment) bool {
	t.Helper()
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name != "WATCH_NAMESPACE" {
				continue
			}
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "olm.targetNamespaces") {
				return d.Spec.Template.Annotations["olm.targetNamespaces"] == ""
			}
			return e.Value == "" && e.ValueFrom == nil
		}
	}
	return true
}

// TestKustomizeRBAC checks the RBAC of each kustomize configuration the manager runs with. A
// ClusterRole of namespaced rights bound cluster-wide is allowed only where the manager watches
// every namespace (config/default's deploy, and config/local, which runs the same manager outside
// the cluster); config/manifests, from which the bundle is made, and config/namespaced, the
// release's install-namespace.yaml, must bind them in a namespace.
func TestKustomizeRBAC(t *testing.T) {
	allNamespaces := build(t, "default")
	if len(allNamespaces.deployments) != 1 || !watchesAllNamespaces(t, allNamespaces.deployments[0]) {
		t.Fatal("config/default's manager does not watch all namespaces: its namespaced rights must then be Roles in the watched namespaces")
	}
	oneNamespace := build(t, "namespaced")
	if len(oneNamespace.deployments) != 1 || watchesAllNamespaces(t, oneNamespace.deployments[0]) {
		t.Fatal("config/namespaced's manager watches all namespaces: it must watch its own")
	}
	for _, dir := range []string{"default", "local", "manifests", "namespaced"} {
		t.Run(dir, func(t *testing.T) {
			k := build(t, dir)
			if len(k.boundCluster)+len(k.boundInNS) == 0 {
				t.Fatal("no role is bound to the manager's ServiceAccount")
			}
			bound := append(slices.Clone(k.boundCluster), k.boundInNS...)
			for name, rules := range k.roles {
				for _, p := range problems("config/"+dir+" "+name, rules, true) {
					// The user-facing admin roles grant * on their kind: only the manager's
					// roles must not; none may write ConfigMaps or PersistentVolumeClaims.
					if slices.Contains(bound, name) || strings.Contains(p, "configmaps") || strings.Contains(p, "persistentvolumeclaims") {
						t.Error(p)
					}
				}
			}
			for _, name := range k.boundCluster {
				rules, ok := k.roles[name]
				if !ok {
					t.Errorf("%s is bound but not defined", name)
				}
				if dir == "manifests" || dir == "namespaced" {
					for _, p := range problems("config/"+dir+" "+name+" (bound cluster-wide)", rules, false) {
						t.Error(p)
					}
				}
			}
		})
	}
}
