package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
)

// errReplaceFlags: replace needs both the node that leaves and its successor.
var errReplaceFlags = errors.New("pass --node (the control plane to replace) and --with (id:address[:iface] of the new machine)")

func newKubernetesReplaceCmd(s Streams) *cobra.Command {
	var f applyFlags
	var dead, with string
	cmd := &cobra.Command{
		Use:   "replace NAME --node DEAD --with id:addr[:iface]",
		Short: "Show the plan to replace a control plane with another machine, ask y/n, and apply it",
		Long: `Plan the replacement of one control plane of a stored cluster, usually one
whose machine is gone for good, by another machine in one change: the old
etcd member is removed first, while the members that stay are a quorum;
the new machine is added as an etcd learner, then promoted; the other
control planes' keepalived reloads the new unicast peers (no restart: the
VIP stays held); the old Node object is deleted last. The plan states the projected etcd quorum after every
step and blocks any order that could lose it (replacing two of three at
once, or a healthy member while another is down). A node that sends no
heartbeat is not drained.

The same plan results from applying a manifest whose only change is one
control plane's id and address swapped for the new machine's. --with is
id:address, optionally followed by :interface (default enp6s0). An
operator may replace.`,
		Example: `  # Replace the dead node-107 with node-111
  kctl kubernetes replace lab --node node-107 --with node-111:192.168.40.111

  # On another interface, without asking, following the cluster until ready
  kctl kubernetes replace lab --node node-107 --with node-111:192.168.40.111:eno1 --yes --wait`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dead == "" || with == "" {
				return fmt.Errorf("replace %s: %w", args[0], errReplaceFlags)
			}
			ns, err := parseMembers([]string{with})
			if err != nil {
				return fmt.Errorf("--with: %w", err)
			}
			sr := &plan.ScaleRequest{Cluster: args[0], Replace: []plan.Replacement{{Node: dead, With: ns[0]}}}
			return review(cmd, s, apiv1.PlanRequest{Scale: sr}, nil, f, "Apply this plan?")
		},
	}
	cmd.Flags().StringVar(&dead, "node", "", "control plane to replace (node id)")
	cmd.Flags().StringVar(&with, "with", "", "machine that takes its place, as id:address[:iface]")
	f.bind(cmd, true)
	return cmd
}
