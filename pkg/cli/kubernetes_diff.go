package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/plan"
)

func newKubernetesDiffCmd(s Streams) *cobra.Command {
	var paths []string
	var prune pruneFlags
	cmd := &cobra.Command{
		Use:   "diff -f FILE|DIR [-f …]",
		Short: "Print only the field differences between manifests and the stored clusters",
		Long: `Compare KubernetesCluster manifests with the clusters the controller stores
and print only the changed fields (old → new), after defaulting, one cluster
at a time. Nodes and volumes are matched by id and name, so reordering a list
is not a difference. Use 'kctl kubernetes plan' to see what the changes do.
Nothing is changed. Like diff(1) and kubectl diff, the exit code is 0 when
nothing differs, 1 when something does, and 2 when the manifests or the
controller fail.`,
		Example: `  # What differs between lab.yaml and the stored lab cluster?
  kctl kubernetes diff -f lab.yaml
  kctl kubernetes diff -f clusters/ >/dev/null || echo "out of sync"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			differs, err := runDiff(cmd, s, paths, prune)
			if err != nil {
				return &ExitError{Code: diffExitError, Err: err}
			}
			if differs {
				return &ExitError{Code: diffExitDiffers}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory (repeatable; - reads standard input)")
	prune.bind(cmd, "also list stored clusters that no manifest names")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// Exit codes of kctl kubernetes diff other than 0 (no differences).
const (
	diffExitDiffers = 1
	diffExitError   = 2
)

// runDiff prints the differences and reports whether there were any.
func runDiff(cmd *cobra.Command, s Streams, paths []string, prune pruneFlags) (bool, error) {
	req, _, err := readClusterRequest(s, paths, prune)
	if err != nil {
		return false, err
	}
	c, _, err := ctlClient(cmd)
	if err != nil {
		return false, err
	}
	defer c.Close()
	resp, err := c.Plan(cmdContext(cmd), req)
	if err != nil {
		return false, fmt.Errorf("compute plan: %w", err)
	}
	if err := printDiff(s, resp.Plan); err != nil {
		return false, err
	}
	return resp.Plan.Changes(), nil
}

// printDiff prints each cluster's field changes.
func printDiff(s Streams, p *plan.Plan) error {
	for _, c := range p.Clusters {
		var lines []string
		switch c.Action {
		case plan.ActionCreate:
			lines = append(lines, fmt.Sprintf("+ cluster %q: not stored yet (every field is new)", c.Name))
		case plan.ActionDelete:
			lines = append(lines, fmt.Sprintf("- cluster %q: stored, named by no manifest", c.Name))
		case plan.ActionNoOp:
			lines = append(lines, fmt.Sprintf("  cluster %q: no differences", c.Name))
		default:
			lines = append(lines, fmt.Sprintf("~ cluster %q", c.Name))
		}
		for _, d := range c.Diff {
			switch {
			case d.Old == "":
				lines = append(lines, fmt.Sprintf("    + %s: %q", d.Path, d.New))
			case d.New == "":
				lines = append(lines, fmt.Sprintf("    - %s: %q", d.Path, d.Old))
			default:
				lines = append(lines, fmt.Sprintf("    ~ %s: %q → %q", d.Path, d.Old, d.New))
			}
		}
		for _, l := range lines {
			if _, err := fmt.Fprintln(s.Out, l); err != nil {
				return err
			}
		}
	}
	return nil
}
