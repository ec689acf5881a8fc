package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
)

// newUpdateListCmd is `kctl update list`: every stored ClusterUpdate.
func newUpdateListCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored ClusterUpdates with their phase and progress",
		Long: `List every stored ClusterUpdate: NAME, VERSION and KIND, PHASE, APPROVAL
(the policy and whether it was given), STEPS as finished/total, and AGE since
it was stored. 'kctl update status NAME' shows one update's steps.`,
		Example: `  kctl update list
  kctl update list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			items, err := listObjects[api.ClusterUpdate](cmd, api.KindClusterUpdate)
			if err != nil {
				return err
			}
			if done, err := printStructured(s, values(items), output); done {
				return err
			}
			tw := newTable(s.Out)
			if err := row(tw, "NAME", "VERSION", "KIND", "PHASE", "APPROVAL", "STEPS", "AGE"); err != nil {
				return err
			}
			for _, it := range items {
				u := it.val
				approval := orDash(u.Spec.Approval)
				if u.Spec.Approve {
					approval += " (approved)"
				}
				if err := row(tw, it.obj.Name, u.Spec.Version, orDash(u.Spec.UpdateKind), orUnknown(u.Status.Phase), approval,
					fmt.Sprintf("%d/%d", finishedSteps(u.Status.Steps), len(u.Status.Steps)), age(it.obj.CreateTime)); err != nil {
					return err
				}
			}
			return tw.Flush()
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// finishedSteps counts the steps that have a finish time.
func finishedSteps(steps []api.UpdateStep) int {
	n := 0
	for _, st := range steps {
		if st.FinishedAt != "" {
			n++
		}
	}
	return n
}
