package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
)

// newNodeListCmd is `kctl node list`: the machines whose agents registered.
func newNodeListCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the nodes whose agents registered, with their facts",
		Long: `List every node whose kcore-node-agent registered with the controller: its id,
readiness and how long ago the controller leader last heard its heartbeat, its
hostname, addresses, failure domain, kubelet version and the storage backends it
reported. A node appears here once its agent has joined with a token from
'kctl node token create' and sent its facts; only registered nodes can be
control planes in a plan.`,
		Example: "  kctl node list\n  kctl node list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			nodes, err := listObjects[api.Node](cmd, api.KindNode)
			if err != nil {
				return err
			}
			if done, err := printStructured(s, values(nodes), output); done {
				return err
			}
			tw := newTable(s.Out)
			if err := row(tw, "ID", "READY", "LAST SEEN", "HOSTNAME", "ADDRESSES", "FAILURE DOMAIN", "KUBELET", "STORAGE"); err != nil {
				return err
			}
			for _, n := range nodes {
				f := n.val.Facts
				var storage []string
				for _, b := range f.Storage {
					storage = append(storage, fmt.Sprintf("%s:%s (%d GiB free)", b.Class, b.Name, b.FreeBytes>>30))
				}
				sort.Strings(storage)
				if err := row(tw, n.obj.Name, readyWord(n.val.Status.Ready), lastSeen(n.val.Status.LastHeartbeat), orDash(f.Hostname), orDash(strings.Join(f.Addresses, ",")),
					orDash(f.Labels[api.FailureDomainLabel]), orDash(f.Versions["kubelet"]), orDash(strings.Join(storage, ", "))); err != nil {
					return err
				}
			}
			return tw.Flush()
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// readyWord is READY's cell.
func readyWord(ready bool) string {
	if ready {
		return "yes"
	}
	return "no"
}

// lastSeen is LAST SEEN's cell: how long ago the leader last heard the
// node's heartbeat, "-" when it has not since it became leader.
func lastSeen(stamp string) string {
	if stamp == "" {
		return "-"
	}
	return age(stamp) + " ago"
}
