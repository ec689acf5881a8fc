package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func newKubernetesHealthCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "health NAME",
		Short: "Show a cluster's health checks per node and component; exit 0 only when ready",
		Long: `Print the cluster's phase and a table of its checks: the cluster conditions,
each member's readiness, and every item (file, unit, volume, task) each node
agent last reported with its state and message, with the time of the last
result. Exits 0 only when the cluster's phase is ready, 1 otherwise, so
scripts can gate on it.`,
		Example: `  kctl kubernetes health lab
  kctl kubernetes health lab >/dev/null && echo ready`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			kc, _, err := getCluster(cmd, c, args[0])
			if err != nil {
				return err
			}
			reports, err := c.List(cmdContext(cmd), apiv1.KindNodeReport)
			if err != nil {
				return fmt.Errorf("list node reports: %w", err)
			}
			if _, err := fmt.Fprintf(s.Out, "cluster %q: phase %s (last health check %s)\n\n", kc.Metadata.Name, orUnknown(kc.Status.Phase), orDash(kc.Status.LastHealthCheck)); err != nil {
				return err
			}
			tw := newTable(s.Out)
			if err := row(tw, "NODE", "COMPONENT", "CHECK", "STATE", "LAST", "MESSAGE"); err != nil {
				return err
			}
			for _, cond := range kc.Status.Conditions {
				if err := row(tw, "-", "cluster", cond.Type, cond.Status, orDash(cond.Since), strings.TrimSpace(cond.Reason+" "+cond.Message)); err != nil {
					return err
				}
			}
			for _, n := range kc.Status.Nodes {
				state := "not-ready"
				if n.Ready {
					state = "ready"
				}
				if err := row(tw, n.NodeID, n.Role, "node", state, orDash(kc.Status.LastHealthCheck), n.Message); err != nil {
					return err
				}
			}
			prefix := kc.Metadata.Name + "/"
			for _, o := range reports.Items {
				if !strings.HasPrefix(o.Name, prefix) {
					continue
				}
				var rep api.NodeReport
				if err := json.Unmarshal(o.Data, &rep); err != nil {
					return fmt.Errorf("decode report %s: %w", o.Name, err)
				}
				for _, it := range rep.Items {
					if err := row(tw, rep.NodeID, it.Kind+" "+it.Name, "applied", it.State, orDash(o.ModifyTime), it.Message); err != nil {
						return err
					}
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if kc.Status.Phase != api.PhaseReady {
				return &ExitError{Code: 1, Err: fmt.Errorf("cluster %q is %s, not ready", kc.Metadata.Name, orUnknown(kc.Status.Phase))}
			}
			return nil
		},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
