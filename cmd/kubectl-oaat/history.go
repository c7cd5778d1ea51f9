package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
	"github.com/oaat-io/oaat-operator/internal/history"
)

// maxHistoryFile bounds the file `history import` reads: a record holds at most history.MaxItems
// entries, well under this.
const maxHistoryFile = 4 << 20

// newHistoryCommand returns `history export GROUP` and `history import GROUP -f FILE`: a backup of
// a group's item history, and its restore into a group restored without its status, through the
// operator's own adoption of an OaatGroupHistory (docs/history.md).
func newHistoryCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Export an OaatGroup's item history, or import it into a group restored without its status",
	}
	var file string
	importCmd := &cobra.Command{
		Use:   "import GROUP -f FILE",
		Short: "Give the items of GROUP that have no history of their own the history of an exported record (- reads stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return importHistory(cmd.Context(), flags, streams, args[0], file, time.Now())
		},
	}
	// pflag takes the first back-quoted word of a usage as the flag's value name (FILE).
	importCmd.Flags().StringVarP(&file, "filename", "f", "", "the `FILE` that kubectl oaat history export wrote; - reads stdin")
	_ = importCmd.MarkFlagRequired("filename")
	cmd.AddCommand(&cobra.Command{
		Use:   "export GROUP",
		Short: "Print GROUP's item history as an OaatGroupHistory (YAML), for `history import`",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return exportHistory(cmd.Context(), flags, streams, args[0], time.Now())
		},
	}, importCmd)
	return cmd
}

// exportHistory prints the record the operator would write if the group were deleted now.
func exportHistory(ctx context.Context, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, name string, now time.Time) error {
	c, namespace, err := connect(flags)
	if err != nil {
		return err
	}
	group := &v1alpha1.OaatGroup{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, group); err != nil {
		return groupError(err, namespace, name)
	}
	record := history.Record(group, now, history.DefaultRetention)
	record.APIVersion, record.Kind = v1alpha1.GroupVersion.String(), "OaatGroupHistory"
	out, err := yaml.Marshal(record)
	if err != nil {
		return fmt.Errorf("writing the record as YAML: %w", err)
	}
	_, err = streams.Out.Write(out)
	return err
}

// importHistory creates the record of file as the OaatGroupHistory of the group name, valid for
// history.DefaultRetention from now, and when the group exists and has had its first pass (it
// carries the finalizer oaat.io/history), removes that finalizer, so that the operator's next pass
// adopts the record by the rule every re-created group follows: only items without history of
// their own take it, then the record is deleted and the finalizer added again.
func importHistory(ctx context.Context, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, name, file string, now time.Time) error {
	record, err := readRecord(streams.In, file)
	if err != nil {
		return err
	}
	c, namespace, err := connect(flags)
	if err != nil {
		return err
	}
	group := &v1alpha1.OaatGroup{}
	switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, group); {
	case apierrors.IsNotFound(err):
		group = nil
	case err != nil:
		return groupError(err, namespace, name)
	case string(group.UID) == record.Spec.GroupUID:
		return fmt.Errorf("the record in %s is the history of OaatGroup %q itself (UID %s), not of an earlier group: nothing to import",
			file, name, group.UID)
	case group.Spec.OaatType != record.Spec.OaatType:
		return fmt.Errorf("the record in %s is the history of OaatType %q, and OaatGroup %q runs %q: the operator would discard it",
			file, record.Spec.OaatType, name, group.Spec.OaatType)
	}
	imported := &v1alpha1.OaatGroupHistory{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{v1alpha1.LabelManagedBy: v1alpha1.ManagedByValue}},
		Spec: record.Spec,
	}
	imported.Spec.ExpiresAt = metav1.NewTime(now.Truncate(time.Second).Add(history.DefaultRetention))
	if err := c.Create(ctx, imported); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("OaatGroupHistory %q exists already in namespace %q (the record of a deleted group, or an earlier import): "+
				"let the group adopt it, or delete it first: %w", name, namespace, err)
		}
		return fmt.Errorf("creating OaatGroupHistory %q in namespace %q: %w", name, namespace, err)
	}
	fmt.Fprintf(streams.Out, "oaatgrouphistory.%s/%s created (%d items)\n", v1alpha1.GroupVersion.Group, name, len(imported.Spec.Items))
	if group == nil || !controllerutil.ContainsFinalizer(group, v1alpha1.FinalizerHistory) {
		return nil // the group's first pass adopts it
	}
	if err := readopt(ctx, c, group); err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "%s/%s adopts it on the operator's next pass\n", groupResource, name)
	return nil
}

// readopt removes the finalizer oaat.io/history from the group, and it alone (a JSON patch that
// tests its place first), so that the operator reads the group's OaatGroupHistory again.
func readopt(ctx context.Context, c client.Client, group *v1alpha1.OaatGroup) error {
	for i, f := range group.Finalizers {
		if f != v1alpha1.FinalizerHistory {
			continue
		}
		patch := fmt.Appendf(nil, `[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`,
			i, v1alpha1.FinalizerHistory, i)
		if err := c.Patch(ctx, group, client.RawPatch(types.JSONPatchType, patch)); err != nil {
			return fmt.Errorf("removing the finalizer %s from OaatGroup %q, so that it adopts the record (run the import again): %w",
				v1alpha1.FinalizerHistory, group.Name, err)
		}
		return nil
	}
	return nil
}

// readRecord reads an OaatGroupHistory from file ("-": in), as `history export` writes it.
func readRecord(in io.Reader, file string) (*v1alpha1.OaatGroupHistory, error) {
	r := in
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("reading the record: %w", err)
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxHistoryFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(data) > maxHistoryFile {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a record `kubectl oaat history export` writes", file, maxHistoryFile)
	}
	record := &v1alpha1.OaatGroupHistory{}
	if err := yaml.UnmarshalStrict(data, record); err != nil {
		return nil, fmt.Errorf("%s is not an OaatGroupHistory: %w", file, err)
	}
	if record.Kind != "OaatGroupHistory" || record.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, fmt.Errorf("%s holds %s %s, not an OaatGroupHistory of %s", file, record.APIVersion, record.Kind, v1alpha1.GroupVersion)
	}
	if record.Spec.OaatType == "" {
		return nil, errors.New(file + " names no OaatType (spec.oaatType): not a record `kubectl oaat history export` writes")
	}
	return record, nil
}
