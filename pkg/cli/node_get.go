package cli

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
)

// newNodeGetCmd is `kctl node get ID`: one registered node's facts.
func newNodeGetCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get ID",
		Short: "Show one registered node's facts: addresses, interfaces, storage, disks, versions",
		Long: `Show everything a node's kcore-node-agent reported about its machine: hostname,
addresses, interfaces, storage backends, disks, binary versions, labels and
measured fsync latency. The plan checks manifests against these facts, so
this is where to look when a plan says a node lacks an interface or a volume
group. -o json or yaml prints the stored Node object.`,
		Example: `  kctl node get lab-n1
  kctl node get lab-n1 -o json | jq .facts.interfaces`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			o, err := c.Get(cmdContext(cmd), api.KindNode, args[0])
			if err != nil {
				return fmt.Errorf("get node %s: %w (registered nodes: kctl node list)", args[0], err)
			}
			var n api.Node
			if err := json.Unmarshal(o.Data, &n); err != nil {
				return fmt.Errorf("decode node %s: %w", args[0], err)
			}
			if done, err := printStructured(s, n, output); done {
				return err
			}
			return printNodeSummary(s, o.Name, &n)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func printNodeSummary(s Streams, id string, n *api.Node) error {
	f := n.Facts
	lines := []string{
		"ID:         " + id,
		"Hostname:   " + orDash(f.Hostname),
		"Addresses:  " + orDash(strings.Join(f.Addresses, ", ")),
	}
	for _, i := range f.Interfaces {
		state := "down"
		if i.Up {
			state = "up"
		}
		lines = append(lines, fmt.Sprintf("Interface:  %s %s %s %s", i.Name, state, orDash(i.MAC), strings.Join(i.Addresses, ",")))
	}
	for _, b := range f.Storage {
		lines = append(lines, fmt.Sprintf("Storage:    %s:%s (%d GiB free)", b.Class, b.Name, b.FreeBytes>>30))
	}
	for _, d := range f.Disks {
		b, _ := json.Marshal(d)
		lines = append(lines, "Disk:       "+string(b))
	}
	lines = append(lines, sortedPairs("Version:    ", f.Versions)...)
	lines = append(lines, sortedPairs("Label:      ", f.Labels)...)
	if f.Fsync != nil {
		b, _ := json.Marshal(f.Fsync)
		lines = append(lines, "Fsync:      "+string(b))
	}
	_, err := fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
	return err
}

// sortedPairs formats a map as "prefix key=value" lines in key order.
func sortedPairs(prefix string, m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, prefix+k+"="+m[k])
	}
	return out
}
