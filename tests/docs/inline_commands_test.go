package docs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// inlineCommandStarts are the first words of the inline code spans of the prose that are
// commands a reader may type.
var inlineCommandStarts = []string{"kubectl ", "make ", "helm "}

// inlineNotRun are the commands written inline in the prose that no test runs from their page,
// as notRun has them for the shell blocks (whose entries hold for inline commands too).
var inlineNotRun = []notRunEntry{
	{prefix: "kubectl oaat", reason: "the plugin or a subcommand named in the prose: TestKubectlOaatCommands checks that the subcommand and " +
		"each flag exist, and cmd/kubectl-oaat's tests run every subcommand against a real API server"},
	{file: "docs/concepts.md", prefix: "kubectl get oaat", exact: true, reason: "names the category oaat that every CRD of config/crd/bases declares"},
	{file: "docs/history.md", prefix: "kubectl delete oaatgroup backups", exact: true, reason: "the page's story of a group re-created by hand: " +
		"tests/integration/history_test.go deletes and re-creates the group through the API and expects the HistoryAdopted event"},
	{file: "docs/history.md", prefix: "kubectl apply -f backups.yaml", exact: true, reason: "the same story: the user's own file"},
	{file: "docs/history.md", prefix: "kubectl events --for oaatgroup/backups", exact: true, reason: "the same story: " +
		"tests/integration/history_test.go reads the group's events through the API"},
	{file: "docs/history.md", prefix: "kubectl get oaatgrouphistories", exact: true, reason: "lists the records between a deletion and a re-creation, " +
		"a moment of the story above; tests/integration/history_test.go reads the record through the API"},
	{file: "docs/history.md", prefix: "kubectl delete oaatgrouphistory backups", exact: true, reason: "deletes the record of the story above, " +
		"to start afresh; tests/integration deletes records through the API"},
	{file: "docs/install.md", prefix: "kubectl delete clusterrolebinding prometheus-oaat-metrics", exact: true,
		reason: "deletes the binding the user made; tests/e2e makes it with the page's command, then deletes it through the API"},
	{file: "docs/locks.md", prefix: "kubectl edit olock nas", exact: true, reason: "opens an editor on the user's lock: nothing to script"},
	{file: "docs/locks.md", prefix: "kubectl get events -n default --field-selector involvedObject.kind=ClusterOaatLock", exact: true,
		reason: "reads the events of the user's ClusterOaatLocks; what they say depends on the cluster's history"},
	{file: "docs/migrating-from-python.md", prefix: "kubectl apply -n NAMESPACE -f ...", exact: true, reason: "a template: the user's namespace and files"},
	{file: "docs/olm.md", prefix: "kubectl get oaatgroups -n oaat-operator", exact: true,
		reason: "after operator-sdk run bundle (a transcript of tests/olmcatalog): what it lists depends on the groups the reader made"},
	{file: "docs/pvc-backup.md", prefix: "kubectl label pvc backup-target backup-role=target", exact: true,
		reason: "labels the user's target claim; the page's sample and its real-node transcripts select with matchLabels, which leaves the target out"},
	{file: "docs/security.md", prefix: "kubectl label namespace NAMESPACE pod-security.kubernetes.io/enforce=restricted", exact: true,
		reason: "a template for the namespace of an OLM install; the same command on oaat-demo is docs/install.md's block that tests/realnode runs"},
	{prefix: "kubectl delete pod -n NAMESPACE POD", exact: true, reason: "a runbook's step on the user's pod (placeholders)"},
	{file: "docs/runbooks/oaat-operator-down.md", prefix: `kubectl get csv -n "$NS" -o yaml`, exact: true,
		reason: "prints the CSV of the user's OLM install for its conditions; tests/olminstall reads the CSV's phase through the API"},
	{file: "docs/scheduling.md", prefix: "kubectl patch oag NAME --type=json ", reason: "a template (NAME) of the one patch that swaps " +
		"frequency for schedule; the API's rule that refuses both is checked by the YAML blocks of the page"},
	{file: "docs/troubleshooting.md", prefix: "kubectl logs -n oaat-operator-system ", reason: "the log of the leader pod of the user's install: " +
		"output that varies, nothing to assert"},
	{file: "docs/troubleshooting.md", prefix: "kubectl get pod POD -o jsonpath='{.metadata.finalizers}'", exact: true,
		reason: "a template (POD) for the user's stuck pod; tests/integration/tracking_test.go reads pods' finalizers through the API"},
	{file: "docs/troubleshooting.md", prefix: "kubectl annotate oag GROUP pause_new_jobs-", exact: true,
		reason: "a template (GROUP) that removes the Python operator's annotation from the user's group"},
	{file: "docs/troubleshooting.md", prefix: "kubectl get crd oaatgroups.oaat.io -o yaml", exact: true, reason: "prints the installed CRD for a bug report: nothing to assert"},
	{file: "docs/troubleshooting.md", prefix: "kubectl get oag GROUP -o yaml", exact: true, reason: "a template (GROUP) for a bug report: nothing to assert"},
	{file: "docs/upgrading.md", prefix: "kubectl patch installplan NAME ", reason: "approves a Manual InstallPlan of the user's Subscription (a template: NAME)"},
	{file: "docs/upgrading.md", prefix: "kubectl get csv -n oaat-operator -w", exact: true, reason: "a watch, which does not return by itself"},
	{file: "docs/development.md", prefix: "kubectl get csv", exact: true, reason: "names the command that shows an OLM test's CSVs, left on its cluster"},
}

// kubectlCommandNameRE matches an inline span that names a kubectl command, with flags perhaps, but
// no operand: a tool the prose speaks of (`kubectl logs`, `kubectl replace --force`), not a
// command line to run.
var kubectlCommandNameRE = regexp.MustCompile(`^kubectl [a-z-]+( --?[a-z-]+)*$`)

// inlineCommand is a command written in an inline code span of a page's prose.
type inlineCommand struct {
	where, file, text string
}

// inlineCommands returns the inline code spans of the docs' prose that start with one of
// inlineCommandStarts, their whitespace (a span may wrap across lines) made single spaces.
func inlineCommands(t *testing.T) []inlineCommand {
	t.Helper()
	pages, err := readPages()
	if err != nil {
		t.Fatal(err)
	}
	var out []inlineCommand
	for _, p := range pages {
		for _, s := range p.proseSnippets() {
			text := strings.Join(strings.Fields(s.text), " ")
			for _, start := range inlineCommandStarts {
				if strings.HasPrefix(text, start) {
					out = append(out, inlineCommand{where: s.where, file: p.file, text: text})
					break
				}
			}
		}
	}
	return out
}

// Every command written inline in the prose is run by a test or said not to be, as the commands
// of the shell blocks are (TestShellCommandsAreRun): it is a command of a block of the docs that
// a test runs (a transcript, or a block marked checked-by), written the same, or notRun gives the
// reason no test runs it.
func TestInlineCommandsAreRunOrListed(t *testing.T) {
	run := map[string]string{}
	for _, c := range pageCommands(t) {
		if c.coveredBy == "" || strings.HasPrefix(c.coveredBy, "not run: ") {
			continue
		}
		for _, line := range strings.Split(c.text, "\n") {
			code := strings.Join(strings.Fields(strings.SplitN(line, " #", 2)[0]), " ")
			if _, seen := run[code]; !seen {
				run[code] = c.coveredBy + " (" + c.where + ")"
			}
		}
	}
	byHow := map[string]int{}
	uncovered := 0
	cmds := inlineCommands(t)
	for _, c := range cmds {
		how := run[c.text]
		if how != "" {
			byHow["run: the same command in a block a test runs"]++
			continue
		}
		if kubectlCommandNameRE.MatchString(c.text) {
			byHow["a kubectl command named in the prose, no command line"]++
			continue
		}
		if how = whyNotRun(c.file, c.text, append(slices.Clone(notRun), inlineNotRun...)...); how == "" {
			uncovered++
			t.Errorf("%s: no test runs the inline command `%s`: write it as a block a test runs, or give notRun the reason none does", c.where, c.text)
			continue
		}
		byHow[how]++
	}
	var summary []string
	for _, how := range sortedKeys(byHow) {
		summary = append(summary, fmt.Sprintf("  %3d %s", byHow[how], how))
	}
	t.Logf("%d inline commands in the docs' prose, %d with nothing:\n%s", len(cmds), uncovered, strings.Join(summary, "\n"))
	if len(cmds) < 20 {
		t.Errorf("only %d inline commands found in the docs: the extraction is broken", len(cmds))
	}
}
