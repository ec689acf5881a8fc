package cli

import "github.com/spf13/cobra"

// NewController returns kcore-controller's root command.
func NewController(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kcore-controller",
		Short:         "kcore's Raft-replicated controller",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	return root
}
