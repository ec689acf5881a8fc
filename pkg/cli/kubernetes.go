package cli

import "github.com/spf13/cobra"

// newKubernetesCmd is the `kctl kubernetes` group: validate, and the commands
// that talk to the controller (apply, plan, get, …), each defined in its own
// kubernetes_*.go file.
func newKubernetesCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "kubernetes",
		Aliases: []string{"k8s"},
		Short:   "Manage Kubernetes clusters: validate, plan and apply manifests",
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(
		newKubernetesValidateCmd(s),
		newKubernetesPlanCmd(s),
		newKubernetesApplyCmd(s),
		newKubernetesDiffCmd(s),
		newKubernetesGetCmd(s),
		newKubernetesListCmd(s),
		newKubernetesHealthCmd(s),
		newKubernetesCertsCmd(s),
		newKubernetesScaleCmd(s),
		newKubernetesReplaceCmd(s),
		newKubernetesRotateCACmd(s),
		newKubernetesDeleteCmd(s),
		newKubernetesEtcdCmd(s),
		newKubernetesKubeconfigCmd(s),
	)
	return cmd
}
