package cli

import (
	"io"

	"github.com/spf13/cobra"
)

// Streams are a command's standard input, output and error.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// NewKctl returns kctl's root command.
func NewKctl(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "kctl",
		Short: "kctl drives kcore: declarative, highly available Kubernetes on machines you own",
		Long: `kctl drives kcore: one manifest in, a highly available Kubernetes cluster out.

Write a KubernetesCluster manifest, check it with 'kctl kubernetes validate',
see what will happen with 'kctl kubernetes plan', and make it so with
'kctl kubernetes apply'. Every change shows its plan first and asks y/n.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	bindCtlFlags(root)
	root.AddCommand(
		newVersionCmd(s),
		newKubernetesCmd(s),
		newSchemasCmd(s),
		newExplainCmd(s),
		newCompletionCmd(s),
		newControllerGroupCmd(s),
		newConfigCmd(s),
		newNodeCmd(s),
		newCertCmd(s),
		newAuditCmd(s),
		newApplyCmd(s),
		newUpdateCmd(s),
		newGitOpsCmd(s),
		newGenDocsCmd(s),
	)
	strictGroups(root)
	return root
}
