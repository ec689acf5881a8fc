package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

func newKubernetesGetCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME [-o table|yaml|json]",
		Short: "Show one stored cluster: its spec, phase, nodes and conditions",
		Long: `Show a stored KubernetesCluster. Without -o (or -o table) a readable summary: phase,
API endpoint, members with their readiness, volumes and conditions.
-o yaml and -o json print the whole object, spec and status; the YAML can be
applied back with 'kctl kubernetes apply -f' (status is ignored there).`,
		Example: `  kctl kubernetes get lab
  kctl kubernetes get lab -o yaml > lab.yaml`,
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
			kc, o, err := getCluster(cmd, c, args[0])
			if err != nil {
				return err
			}
			switch output {
			case outputJSON:
				return printJSON(s, kc)
			case outputYAML:
				// The manifest's own YAML, so it can be applied back.
				b, err := yaml.Marshal(kc)
				if err != nil {
					return fmt.Errorf("encode cluster: %w", err)
				}
				_, err = s.Out.Write(b)
				return err
			}
			return printClusterSummary(s, kc, o)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// getCluster reads one stored cluster.
func getCluster(cmd *cobra.Command, c *client.Client, name string) (*api.KubernetesCluster, apiv1.Object, error) {
	o, err := c.Get(cmdContext(cmd), api.KindKubernetesCluster, name)
	if err != nil {
		return nil, o, fmt.Errorf("get cluster %s: %w", name, err)
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		return nil, o, fmt.Errorf("decode cluster %s: %w", name, err)
	}
	return &kc, o, nil
}

// caSummary is the generation of the cluster's CAs and the rotation in
// progress, if any.
func caSummary(kc *api.KubernetesCluster) string {
	out := fmt.Sprintf("generation %d", kc.Status.CAGeneration)
	if line := caRotationLine(kc); line != "" {
		out += " · " + line + " (started " + orUnknown(kc.Status.CARotation.Started) + ")"
	} else if kc.Status.CAGeneration < kc.Spec.CAGeneration {
		out += fmt.Sprintf(" · rotation to %d not started yet", kc.Spec.CAGeneration)
	}
	return out
}

// endpoint is the cluster's API URL, with the VIP when high availability is on.
func endpoint(kc *api.KubernetesCluster) string {
	ep := "https://" + kc.Spec.APIServerEndpoint
	if ha := kc.Spec.HighAvailability; ha.Enabled {
		ep += fmt.Sprintf(" (VIP %s on %s)", ha.VIPAddress, ha.VIPInterface)
	}
	return ep
}

func printClusterSummary(s Streams, kc *api.KubernetesCluster, o apiv1.Object) error {
	ready := map[string]api.NodeStatus{}
	for _, n := range kc.Status.Nodes {
		ready[n.NodeID] = n
	}
	member := func(n api.ClusterNode) string {
		st, ok := ready[n.NodeID]
		state := "no status yet"
		switch {
		case ok && st.Ready:
			state = "ready"
		case ok:
			state = "not ready"
			if st.Message != "" {
				state += ": " + st.Message
			}
		}
		return fmt.Sprintf("%s %s on %s (%s)", n.NodeID, n.AdvertiseAddress, n.Iface, state)
	}
	lines := []string{
		"Name:            " + kc.Metadata.Name,
		"Phase:           " + orUnknown(kc.Status.Phase),
		"API:             " + endpoint(kc),
		fmt.Sprintf("Network:         cni %s · pods %s · services %s · dns %s", kc.Spec.CNI, kc.Spec.ClusterCIDR, kc.Spec.ServiceCIDR, kc.Spec.ClusterDNS),
		fmt.Sprintf("Generation:      %d (observed %d)", kc.Metadata.Generation, kc.Status.ObservedGeneration),
		fmt.Sprintf("Stored:          created %s, modified %s (index %d)", orUnknown(o.CreateTime), orUnknown(o.ModifyTime), o.ModifyIndex),
		"CAs:             " + caSummary(kc),
		"Control planes:",
	}
	for _, n := range kc.Spec.ControlPlaneNodes {
		lines = append(lines, "  "+member(n))
	}
	if len(kc.Spec.WorkerNodes) > 0 {
		lines = append(lines, "Workers:")
		for _, n := range kc.Spec.WorkerNodes {
			lines = append(lines, "  "+member(n))
		}
	}
	if vols := kc.Spec.LocalProvisioner.Volumes; len(vols) > 0 {
		lines = append(lines, "Volumes:")
		for _, v := range vols {
			lines = append(lines, fmt.Sprintf("  %s on %s: %s %d bytes %s", v.Name, v.NodeID, v.StorageClass, v.SizeBytes, v.FSType))
		}
	}
	lines = append(lines, specRolloutLines(kc)...)
	if len(kc.Status.Conditions) > 0 {
		lines = append(lines, "Conditions:")
		for _, c := range kc.Status.Conditions {
			lines = append(lines, strings.TrimRight(fmt.Sprintf("  %s=%s %s %s", c.Type, c.Status, c.Reason, c.Message), " "))
		}
	}
	if kc.Status.LastHealthCheck != "" {
		lines = append(lines, "Last health check: "+kc.Status.LastHealthCheck)
	}
	_, err := fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
	return err
}
