package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/manifest"
)

func newKubernetesValidateCmd(s Streams) *cobra.Command {
	var paths []string
	cmd := &cobra.Command{
		Use:   "validate -f FILE|DIR [-f FILE|DIR …]",
		Short: "Check manifests offline and print every error and warning",
		Long: `Check KubernetesCluster and ClusterUpdate manifests without a controller.

Reads YAML (.yaml, .yml; several documents per file) and HCL (.hcl,
resource "kcore_kubernetes_cluster" and resource "kcore_cluster_update")
files. A directory is read recursively in lexical order, skipping dotfiles.
Every problem is printed, one per line and sorted, as

  file:line: field.path: message
  file:line: warning: field.path: message

followed by a summary. In an HCL file the position is file:line:column and
the field is named as written there (min_compatible_reader,
control_plane_nodes[1].advertise_address; a repeated block by its list name
and index); a YAML syntax error points at the offending character
(file:line:column). Unknown fields come with a "did you mean"; the same
kind and name declared twice is an error naming both places. Defaults are
applied before the checks, exactly as apply would.

Exits 1 when there is any error, 0 when there are only warnings.`,
		Example: `  # Check one cluster manifest
  kctl kubernetes validate -f cluster.yaml

  # Check a GitOps directory: every *.yaml, *.yml and *.hcl below it
  kctl kubernetes validate -f examples/

  # Several files and directories; duplicates are found across all of them
  kctl kubernetes validate -f clusters/ -f updates/release-0-5-0.hcl`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return runValidate(s, paths)
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory to check (repeatable; - reads standard input)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func runValidate(s Streams, paths []string) error {
	docs, ds := readInputs(s, paths)
	ds = append(ds, manifest.Check(docs)...)
	ds.Sort()
	for _, d := range ds {
		if _, err := fmt.Fprintln(s.Out, d); err != nil {
			return fmt.Errorf("write diagnostics: %w", err)
		}
	}
	errs, warns := len(ds.Errors()), len(ds.Warnings())
	var summary string
	switch {
	case errs > 0:
		files := map[string]bool{}
		for _, d := range ds {
			files[d.Pos.File] = true
		}
		summary = plural(errs, "error")
		if warns > 0 {
			summary += ", " + plural(warns, "warning")
		}
		summary += " in " + plural(len(files), "file")
	case len(docs) == 0:
		summary = strings.Join(paths, ", ") + ": no documents"
		errs = 1
	default:
		summary = strings.Join(paths, ", ") + ": " + plural(len(docs), "document") + " valid"
		if warns > 0 {
			summary += " (" + plural(warns, "warning") + ")"
		}
	}
	if _, err := fmt.Fprintln(s.Out, summary); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if errs > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// plural formats a count with its noun: 1 error, 2 errors.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
