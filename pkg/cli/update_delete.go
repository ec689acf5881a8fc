package cli

import (
	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
)

// newUpdateDeleteCmd is kctl update delete: the plan to remove a stored
// ClusterUpdate, y/n, and the apply, through the same plan and apply as
// every other change.
func newUpdateDeleteCmd(s Streams) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Show the plan to remove a finished or never-started ClusterUpdate, ask y/n, and remove it",
		Long: `Plan the removal of a stored ClusterUpdate, print it, ask "Apply this plan?
[y/N]" and, on yes, remove it with its status and step history. Only an update
that never started (pending) or finished (done, failed) may be removed: one that
is approved, rolling, paused or rolling back is refused as update-in-progress,
since nothing would be left to resume it or roll it back. The nodes keep the
release they run. An operator may run it; the removal is audited.

A ClusterUpdate a GitOps source created is removed by deleting its file from
the repository instead (the source prunes it once it is done).`,
		Example: `  # Remove a finished update after reviewing the plan
  kctl update delete release-0-5-0

  # Remove it without asking
  kctl update delete release-0-5-0 --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := apiv1.PlanRequest{DeleteUpdates: []string{args[0]}}
			return review(cmd, s, req, nil, f, "Apply this plan?")
		},
	}
	f.bind(cmd, false)
	return cmd
}
