package cli

import "github.com/spf13/cobra"

// NewAgent returns kcore-node-agent's root command.
func NewAgent(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kcore-node-agent",
		Short:         "kcore's node agent: applies what the controller rendered for this node",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	return root
}
