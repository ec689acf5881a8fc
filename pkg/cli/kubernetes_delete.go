package cli

import (
	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
)

func newKubernetesDeleteCmd(s Streams) *cobra.Command {
	var f applyFlags
	var force, purge bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Show the plan to delete a cluster, ask y/n, and start its teardown",
		Long: `Plan the deletion of a stored cluster, print it (every node's units stopped,
workers first, the bootstrap control plane last), ask "Apply this plan? [y/N]"
and, on yes, set the cluster's phase to deleting. The orchestrator then turns
Kubernetes off on every node and removes the cluster from the controller last;
'kctl kubernetes list' shows it as deleting until then.

Volumes are kept with their data unless --purge-volumes is given. --force
lets the teardown go on where nodes do not answer. Both are recorded on the
cluster for the orchestrator and shown under the plan.

With --wait the command follows the teardown until the cluster is gone.`,
		Example: `  # Delete the lab cluster after reviewing the plan
  kctl kubernetes delete lab

  # Delete without asking and wait until it is gone
  kctl kubernetes delete lab --yes --wait

  # Also remove its volumes and their data
  kctl kubernetes delete lab --purge-volumes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := apiv1.PlanRequest{Delete: []string{args[0]}, Force: force, PurgeVolumes: purge}
			return review(cmd, s, req, nil, f, "Apply this plan?")
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "tear down even where nodes do not answer")
	cmd.Flags().BoolVar(&purge, "purge-volumes", false, "also remove the volumes kcore created for the cluster, with their data")
	f.bind(cmd, true)
	return cmd
}
