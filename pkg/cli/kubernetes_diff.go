package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/plan"
)

func newKubernetesDiffCmd(s Streams) *cobra.Command {
	var paths []string
	var prune bool
	cmd := &cobra.Command{
		Use:   "diff -f FILE|DIR [-f …]",
		Short: "Print only the field differences between manifests and the stored clusters",
		Long: `Compare KubernetesCluster manifests with the clusters the controller stores
and print only the changed fields (old → new), after defaulting, one cluster
at a time. Nodes and volumes are matched by id and name, so reordering a list
is not a difference. Use 'kctl kubernetes plan' to see what the changes do.
Nothing is changed; the exit code is 0 unless the manifests or the
controller fail.`,
		Example: `  # What differs between lab.yaml and the stored lab cluster?
  kctl kubernetes diff -f lab.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := readClusterRequest(s, paths, prune)
			if err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			resp, err := c.Plan(cmdContext(cmd), req)
			if err != nil {
				return fmt.Errorf("compute plan: %w", err)
			}
			return printDiff(s, resp.Plan)
		},
	}
	cmd.Flags().StringArrayVarP(&paths, "filename", "f", nil, "manifest file or directory (repeatable)")
	cmd.Flags().BoolVar(&prune, "prune", false, "also list stored clusters that no manifest names")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
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
