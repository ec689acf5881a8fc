package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func newKubernetesRotateCACmd(s Streams) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "rotate-ca NAME",
		Short: "Show the plan to rotate a cluster's CAs, ask y/n, and apply it",
		Long: `Plan the rotation of a stored cluster's certificate authorities (the
cluster, etcd and front-proxy CAs) to a new generation: the stored manifest
with spec.caGeneration raised by one, planned and applied as that edit
would be (editing the manifest and applying it, or committing it to a
GitOps source, does the same).

The rotation goes through three rolls, each reaching the nodes like a spec
change (one control plane at a time with the VIP handed over first,
kubelets in batches, gates between steps), each starting once every member
applied the one before and the cluster is ready:

  trust    every member trusts the old and the new CAs; the old ones
           still issue every certificate
  reissue  the new CAs issue every certificate; the old ones are still
           trusted, so a member not restarted yet still talks to one that was
  end      the old CAs are dropped

The plan shows each roll's changes. Nodes, the controller and pods
(kube-root-ca.crt) follow by themselves; kubeconfigs and client
certificates handed out before stop working when the rotation ends: fetch
new ones with 'kctl kubernetes kubeconfig'. 'kctl kubernetes get NAME'
shows the rotation's phase and --wait follows it to its end. Only an admin
may rotate: it changes the stored manifest.`,
		Example: `  # Rotate the CAs of lab, following the rotation to its end
  kctl kubernetes rotate-ca lab --wait

  # Without asking
  kctl kubernetes rotate-ca lab --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			kc, _, err := getCluster(cmd, c, args[0])
			c.Close()
			if err != nil {
				return err
			}
			next := api.KubernetesCluster{APIVersion: kc.APIVersion, Kind: kc.Kind, Spec: kc.Spec,
				Metadata: api.ObjectMeta{Name: kc.Metadata.Name, Labels: kc.Metadata.Labels}}
			next.Spec.CAGeneration = max(kc.Spec.CAGeneration, kc.Status.CAGeneration) + 1
			if next.Spec.CAGeneration > api.MaxCAGeneration {
				return fmt.Errorf("rotate the CAs of %s: generation %d is the last one", args[0], api.MaxCAGeneration)
			}
			return review(cmd, s, apiv1.PlanRequest{Clusters: []api.KubernetesCluster{next}}, nil, f, "Rotate the CAs with this plan?")
		},
	}
	f.bind(cmd, true)
	return cmd
}
