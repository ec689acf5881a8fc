package cli

import "github.com/spf13/cobra"

// newControllerGroupCmd is kctl's `controller` group: create the PKI of a
// new installation, and manage membership and snapshots of a running one.
// (kcore-controller's own root command is NewController in controller.go.)
func newControllerGroupCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Set up and manage kcore's replicated controller",
		Long: `Set up and manage kcore's replicated controller.

A kcore installation has 1, 3 or 5 controller replicas that keep the desired
state replicated with Raft. 'kctl controller init' creates their certificates
and your kctl context; the other commands talk to the running replicas.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(
		newControllerInitCmd(s),
		newControllerMembersCmd(s),
		newControllerCertsCmd(s),
		newControllerAddCmd(s),
		newControllerRemoveCmd(s),
		newControllerSnapshotCmd(s),
	)
	return cmd
}
