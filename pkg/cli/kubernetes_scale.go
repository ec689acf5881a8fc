package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
)

// defaultIface is a scaled-in member's interface when id:addr names none.
const defaultIface = "enp6s0"

func newKubernetesScaleCmd(s Streams) *cobra.Command {
	var f applyFlags
	var cps, workers, remove []string
	cmd := &cobra.Command{
		Use:   "scale NAME [--add-control-plane id:addr[:iface]] [--add-workers id:addr[:iface],…] [--remove id,…]",
		Short: "Show the plan to add or remove nodes of a cluster, ask y/n, and apply it",
		Long: `Plan a membership change of a stored cluster: new control planes join etcd
one at a time, new workers join as kubelets, removed nodes are drained and
leave (their volumes are kept). The plan states the projected etcd quorum
after every step and blocks any step that would lose it. On yes the cluster's
members are stored and its phase is set to scaling.

Each node is id:address, optionally followed by :interface (default
enp6s0). An operator may scale; other changes need cluster-admin.`,
		Example: `  # Add a third control plane
  kctl kubernetes scale lab --add-control-plane node-109:192.168.40.109

  # Add two workers, one on another interface
  kctl kubernetes scale lab --add-workers node-111:192.168.40.111,node-112:192.168.40.112:eno1

  # Remove a worker without asking
  kctl kubernetes scale lab --remove node-103 --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sr := &plan.ScaleRequest{Cluster: args[0], Remove: remove}
			var err error
			if sr.AddControlPlanes, err = parseMembers(cps); err != nil {
				return fmt.Errorf("--add-control-plane: %w", err)
			}
			if sr.AddWorkers, err = parseMembers(workers); err != nil {
				return fmt.Errorf("--add-workers: %w", err)
			}
			if len(sr.AddControlPlanes)+len(sr.AddWorkers)+len(sr.Remove) == 0 {
				return errors.New("nothing to scale: pass --add-control-plane, --add-workers or --remove")
			}
			return review(cmd, s, apiv1.PlanRequest{Scale: sr}, nil, f, "Apply this plan?")
		},
	}
	cmd.Flags().StringSliceVar(&cps, "add-control-plane", nil, "control plane to add as id:address[:iface] (repeatable, comma-separated)")
	cmd.Flags().StringSliceVar(&workers, "add-workers", nil, "workers to add as id:address[:iface] (repeatable, comma-separated)")
	cmd.Flags().StringSliceVar(&remove, "remove", nil, "node ids to remove (repeatable, comma-separated)")
	f.bind(cmd, true)
	return cmd
}

// parseMembers parses id:address[:iface] values.
func parseMembers(in []string) ([]api.ClusterNode, error) {
	var out []api.ClusterNode
	for _, v := range in {
		parts := strings.Split(strings.TrimSpace(v), ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("%q: want id:address or id:address:iface", v)
		}
		n := api.ClusterNode{NodeID: parts[0], AdvertiseAddress: parts[1], Iface: defaultIface}
		if len(parts) == 3 && parts[2] != "" {
			n.Iface = parts[2]
		}
		out = append(out, n)
	}
	return out, nil
}
