package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/orchestrator"
)

// healthReport is what `kctl kubernetes health` shows, and its -o json/yaml.
type healthReport struct {
	Cluster         string `json:"cluster"`
	Phase           string `json:"phase"`
	LastHealthCheck string `json:"lastHealthCheck,omitempty"`
	// HealthInterval is how often the controllers check the cluster.
	HealthInterval string `json:"healthInterval,omitempty"`
	// StaleFor is how long no health pass has refreshed the status, when
	// that is past the bound api.ClusterStatus.StaleFor sets: the phase is
	// then what was true when it was last checked.
	StaleFor string `json:"staleFor,omitempty"`
	// Addons is the cluster's Addons condition, nil before its first check.
	Addons *healthCheck  `json:"addons,omitempty"`
	Checks []healthCheck `json:"checks"`
}

// healthCheck is one row: a cluster condition, a member's readiness or an
// item an agent applied.
type healthCheck struct {
	Node      string `json:"node"`
	Component string `json:"component"`
	Check     string `json:"check"`
	State     string `json:"state"`
	OK        bool   `json:"ok"`
	Last      string `json:"last,omitempty"`
	Message   string `json:"message,omitempty"`
}

func newKubernetesHealthCmd(s Streams) *cobra.Command {
	var output string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "health NAME",
		Short: "Show what is wrong with a cluster, if anything; exit 0 only when ready",
		Long: fmt.Sprintf(`Print the cluster's phase, whether its add-ons (CoreDNS and, when enabled,
the local-path provisioner) are available and if not what blocks them (the
pod, the node, an image that cannot be pulled, a crash loop, a sandbox or
scheduling error), a count of its checks, and every check that is not ok:
the cluster conditions, each member's readiness, and every item (file, unit,
volume, task) each node agent last reported with its state and message.
-v prints every check, ok or not; -o json or yaml prints them all with an
"ok" field. A status no health pass has refreshed for %d of the
controllers' health intervals (at least %s) is stale: the controllers are
down or without a leader, and the phase is what was true when it was last
checked, so health says so and does not call the cluster ready. Exits 0 only
when the cluster's phase is ready and current, 1 otherwise, so scripts can
gate on it.`, api.StaleAfterPasses, api.MinStaleAfter),
		Example: `  kctl kubernetes health lab
  kctl kubernetes health lab -v
  kctl kubernetes health lab -o json | jq '.checks[] | select(.ok | not)'
  kctl kubernetes health lab >/dev/null && echo ready`,
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
			rep, err := collectHealth(cmd, c, args[0])
			if err != nil {
				return err
			}
			done, err := printStructured(s, rep, output)
			if !done {
				err = printHealth(s, rep, verbose)
			}
			if err != nil {
				return err
			}
			if rep.Phase != api.PhaseReady {
				return &ExitError{Code: 1, Err: fmt.Errorf("cluster %q is %s, not ready", rep.Cluster, rep.Phase)}
			}
			if rep.StaleFor != "" {
				return &ExitError{Code: 1, Err: fmt.Errorf("cluster %q was %s when last checked, %s ago: its status is stale", rep.Cluster, rep.Phase, rep.StaleFor)}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every check, not only those that are not ok")
	return cmd
}

// collectHealth reads the cluster and its node reports into checks.
func collectHealth(cmd *cobra.Command, c *client.Client, name string) (healthReport, error) {
	kc, _, err := getCluster(cmd, c, name)
	if err != nil {
		return healthReport{}, err
	}
	reports, err := c.List(cmdContext(cmd), apiv1.KindNodeReport)
	if err != nil {
		return healthReport{}, fmt.Errorf("list node reports: %w", err)
	}
	rep := healthReport{Cluster: kc.Metadata.Name, Phase: orUnknown(kc.Status.Phase), LastHealthCheck: kc.Status.LastHealthCheck,
		HealthInterval: kc.Status.HealthInterval, Checks: []healthCheck{}}
	if d := kc.Status.StaleFor(time.Now()); d > 0 {
		rep.StaleFor = d.Round(time.Second).String()
	}
	for _, cond := range kc.Status.Conditions {
		ch := healthCheck{Node: "-", Component: "cluster", Check: cond.Type, State: cond.Status,
			OK: cond.Status == "True", Last: cond.Since, Message: strings.TrimSpace(cond.Reason + " " + cond.Message)}
		rep.Checks = append(rep.Checks, ch)
		if cond.Type == orchestrator.CondAddons {
			rep.Addons = &ch
		}
	}
	for _, n := range kc.Status.Nodes {
		state := "not-ready"
		if n.Ready {
			state = "ready"
		}
		rep.Checks = append(rep.Checks, healthCheck{Node: n.NodeID, Component: n.Role, Check: "node", State: state,
			OK: n.Ready, Last: kc.Status.LastHealthCheck, Message: n.Message})
	}
	rep.Checks = append(rep.Checks, specRolloutChecks(kc)...)
	prefix := kc.Metadata.Name + "/"
	for _, o := range reports.Items {
		if !strings.HasPrefix(o.Name, prefix) {
			continue
		}
		var nr api.NodeReport
		if err := json.Unmarshal(o.Data, &nr); err != nil {
			return healthReport{}, fmt.Errorf("decode report %s: %w", o.Name, err)
		}
		for _, it := range nr.Items {
			rep.Checks = append(rep.Checks, healthCheck{Node: nr.NodeID, Component: it.Kind + " " + it.Name, Check: "applied",
				State: it.State, OK: it.State == api.ItemOK, Last: o.ModifyTime, Message: it.Message})
		}
	}
	return rep, nil
}

// printHealth prints the phase, the count of checks, and the checks that
// are not ok (all of them with verbose).
func printHealth(s Streams, rep healthReport, verbose bool) error {
	bad := 0
	for _, ch := range rep.Checks {
		if !ch.OK {
			bad++
		}
	}
	if _, err := fmt.Fprintf(s.Out, "cluster %q: phase %s (last health check %s)\n%d checks, %d ok, %d not ok\n",
		rep.Cluster, rep.Phase, orDash(rep.LastHealthCheck), len(rep.Checks), len(rep.Checks)-bad, bad); err != nil {
		return err
	}
	if rep.StaleFor != "" {
		if _, err := fmt.Fprintf(s.Out, "stale: no health check for %s (the controllers check every %s): the controllers are down or without a leader, and this is what was true then\n",
			rep.StaleFor, rep.HealthInterval); err != nil {
			return err
		}
	}
	if err := printAddons(s, rep.Addons); err != nil {
		return err
	}
	if bad == 0 && !verbose {
		return nil
	}
	if _, err := fmt.Fprintln(s.Out); err != nil {
		return err
	}
	tw := newTable(s.Out)
	if err := row(tw, "NODE", "COMPONENT", "CHECK", "STATE", "LAST", "MESSAGE"); err != nil {
		return err
	}
	for _, ch := range rep.Checks {
		if ch.OK && !verbose {
			continue
		}
		if err := row(tw, ch.Node, ch.Component, ch.Check, ch.State, orDash(ch.Last), ch.Message); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// printAddons prints the add-ons line of the summary: available, or what
// blocks them and since when.
func printAddons(s Streams, ch *healthCheck) error {
	var err error
	switch {
	case ch == nil:
		_, err = fmt.Fprintln(s.Out, "add-ons: not checked yet")
	case ch.OK:
		_, err = fmt.Fprintf(s.Out, "add-ons: available (%s)\n", ch.Message)
	case ch.State == orchestrator.StatusFalse:
		_, err = fmt.Fprintf(s.Out, "add-ons: not available since %s: %s\n", orDash(ch.Last), ch.Message)
	default:
		_, err = fmt.Fprintf(s.Out, "add-ons: %s since %s: %s\n", strings.ToLower(ch.State), orDash(ch.Last), ch.Message)
	}
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
