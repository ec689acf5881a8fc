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
)

// updateAction is one kctl update subcommand that asks the controller to
// move the stored update through one of pkg/rollout's transitions (POST
// /v1/updates/NAME/ACTION, action one of apiv1.UpdateActions).
type updateAction struct {
	name, short, long string
}

func newUpdateCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Follow and steer stored ClusterUpdates: status, approve, pause, resume, rollback",
		Long: `Thin commands on a stored ClusterUpdate (store one with 'kctl apply -f').

approve sets spec.approve and moves a pending update to approved. pause,
resume and rollback record the request in the update's status (phase and
message): the controller makes the transition of the rollout state machine
of pkg/rollout (docs/updates.md) and records it in the audit log under the
action's name; the roller reads the status and acts on it before its next
step. Each action is conditional on the update not having changed since
kctl read it. An operator may run all of them. A stored ClusterUpdate is
never written directly: change its spec with 'kctl apply -f', remove a
pending, done or failed one with 'kctl update delete'.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newUpdateStatusCmd(s), newUpdateListCmd(s), newUpdateDeleteCmd(s))
	for _, a := range []updateAction{
		{name: apiv1.UpdateApprove, short: "Approve a pending ClusterUpdate so the roller may start it",
			long: "Set spec.approve on a pending update and its phase to approved."},
		{name: apiv1.UpdatePause, short: "Ask the roller to pause a ClusterUpdate after its running step",
			long: "Record a pause (phase paused) in a pending, approved or rolling update's status; a running step finishes, no new step starts."},
		{name: apiv1.UpdateResume, short: "Ask the roller to resume a paused ClusterUpdate",
			long: "Record a resume (phase rolling, or approved when no step ran) in a paused update's status; a failed step is tried again."},
		{name: apiv1.UpdateRollback, short: "Ask the roller to roll a ClusterUpdate back",
			long: "Record a rollback (phase rolling-back) in a paused, rolling, failed or done update's status; the roller reverts the steps that ran, last first."},
	} {
		cmd.AddCommand(newUpdateActionCmd(s, a))
	}
	return cmd
}

func newUpdateStatusCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "status NAME",
		Short:   "Show a ClusterUpdate's phase, approval and steps",
		Example: "  kctl update status release-0-5-0\n  kctl update status release-0-5-0 -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			u, err := getUpdate(cmd, c, args[0])
			if err != nil {
				return err
			}
			if done, err := printStructured(s, u, output); done {
				return err
			}
			nodes := "all nodes"
			if !u.Spec.AllNodes {
				nodes = strings.Join(u.Spec.Nodes, ", ")
			}
			lines := []string{
				"Name:      " + u.Metadata.Name,
				"Version:   " + u.Spec.Version + " (" + u.Spec.UpdateKind + ")",
				"Phase:     " + orUnknown(u.Status.Phase),
				fmt.Sprintf("Approval:  %s, approved: %v", u.Spec.Approval, u.Spec.Approve),
				fmt.Sprintf("Strategy:  %s, batch %d, max unavailable %d", u.Spec.Strategy, u.Spec.BatchSize, u.Spec.MaxUnavailable),
				"Nodes:     " + nodes,
			}
			if u.Status.Message != "" {
				lines = append(lines, "Message:   "+u.Status.Message)
			}
			if u.Status.ToVersion != "" {
				lines = append(lines, fmt.Sprintf("Release:   %s → %s", orUnknown(u.Status.FromVersion), u.Status.ToVersion))
			}
			for i, st := range u.Status.Steps {
				lines = append(lines, stepLine(i, st, time.Now()))
			}
			_, err = fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newUpdateActionCmd(s Streams, a updateAction) *cobra.Command {
	return &cobra.Command{
		Use:     a.name + " NAME",
		Short:   a.short,
		Long:    a.long + " The controller makes the change on the update as stored when the call arrives, so the roller's progress meanwhile does not make it fail; a phase that does not allow it is refused.",
		Example: "  kctl update " + a.name + " release-0-5-0",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			u, err := getUpdate(cmd, c, args[0])
			if err != nil {
				return err
			}
			res, err := c.UpdateAction(cmdContext(cmd), u.Metadata.Name, a.name, nil)
			if err != nil {
				return fmt.Errorf("%s ClusterUpdate %s: %w", a.name, u.Metadata.Name, err)
			}
			from := res.From
			if from == "" {
				from = u.Status.Phase
			}
			_, err = fmt.Fprintf(s.Out, "ClusterUpdate %q: phase %s → %s (%s recorded for the roller)\n", u.Metadata.Name, orUnknown(from), orUnknown(res.Phase), a.name)
			return err
		},
	}
}

// stepLine is one step of kctl update status: nodes, scope, state, when it
// started and how long it took (or has been running), and its message.
func stepLine(i int, st api.UpdateStep, now time.Time) string {
	line := fmt.Sprintf("  step %d: %-24s %-14s %-11s", i+1, strings.Join(st.Nodes, ","), orUnknown(st.Scope), orUnknown(st.State))
	if start, err := time.Parse(time.RFC3339, st.StartedAt); err == nil {
		end, took := now, "running for"
		if fin, err := time.Parse(time.RFC3339, st.FinishedAt); err == nil {
			end, took = fin, "took"
		}
		line += fmt.Sprintf(" started %s, %s %s", start.UTC().Format("15:04:05"), took, end.Sub(start).Round(time.Second))
	}
	if len(st.Snapshots) > 0 {
		line += " (etcd snapshot " + strings.Join(st.Snapshots, ", ") + ")"
	}
	if st.Message != "" {
		line += ": " + st.Message
	}
	return strings.TrimRight(line, " ")
}

// getUpdate reads a stored ClusterUpdate.
func getUpdate(cmd *cobra.Command, c *client.Client, name string) (*api.ClusterUpdate, error) {
	o, err := c.Get(cmdContext(cmd), api.KindClusterUpdate, name)
	if err != nil {
		return nil, fmt.Errorf("get ClusterUpdate %s: %w", name, err)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		return nil, fmt.Errorf("decode ClusterUpdate %s: %w", name, err)
	}
	return &u, nil
}
