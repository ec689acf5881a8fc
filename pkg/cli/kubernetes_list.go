package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
)

func newKubernetesListCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored clusters with their phase and node readiness",
		Long: `List every stored KubernetesCluster: NAME, PHASE, ENDPOINT, CONTROL PLANES
and WORKERS as ready/total (readiness as the controller last recorded it in
the cluster's status), and AGE since the cluster was stored.`,
		Example: `  kctl kubernetes list
  kctl kubernetes list -o json | jq -r '.[] | select(.status.phase != "ready") | .metadata.name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			items, err := listObjects[api.KubernetesCluster](cmd, api.KindKubernetesCluster)
			if err != nil {
				return err
			}
			if done, err := printStructured(s, values(items), output); done {
				return err
			}
			tw := newTable(s.Out)
			if err := row(tw, "NAME", "PHASE", "ENDPOINT", "CONTROL PLANES", "WORKERS", "AGE"); err != nil {
				return err
			}
			for _, it := range items {
				o, kc := it.obj, it.val
				cp, w := readyCounts(&kc)
				if err := row(tw, o.Name, orUnknown(kc.Status.Phase), kc.Spec.APIServerEndpoint,
					fmt.Sprintf("%d/%d", cp, len(kc.Spec.ControlPlaneNodes)),
					fmt.Sprintf("%d/%d", w, len(kc.Spec.WorkerNodes)), age(o.CreateTime)); err != nil {
					return err
				}
			}
			return tw.Flush()
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// readyCounts counts the ready control planes and workers in status.nodes.
func readyCounts(kc *api.KubernetesCluster) (cp, workers int) {
	for _, n := range kc.Status.Nodes {
		if !n.Ready {
			continue
		}
		if n.Role == api.RoleControlPlane {
			cp++
		} else {
			workers++
		}
	}
	return cp, workers
}

// age formats the time since an RFC 3339 stamp: 42s, 5m, 3h, 12d.
func age(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return "-"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
