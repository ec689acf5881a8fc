package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/client"
)

// ClusterUpdate phases kctl update sets or checks.
const (
	updatePending     = "pending"
	updateApproved    = "approved"
	updateRolling     = "rolling"
	updatePaused      = "paused"
	updateRollingBack = "rolling-back"
	updateDone        = "done"
	updateFailed      = "failed"
)

// updateAction is one kctl update subcommand that changes the stored object.
type updateAction struct {
	name, short, long string
	// from are the phases the request is accepted in; to is the new phase.
	from []string
	to   string
	// approve also sets spec.approve.
	approve bool
}

func newUpdateCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "update",
		Short: "Follow and steer stored ClusterUpdates: status, approve, pause, resume, rollback",
		Long: `Thin commands on a stored ClusterUpdate (store one with 'kctl apply -f').

approve sets spec.approve and moves a pending update to approved. pause,
resume and rollback record the request in the update's status (phase and
message); the rolling orchestrator reads it and acts before its next step.
Each write is conditional on the object not having changed since it was
read. An operator may run all of them.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newUpdateStatusCmd(s))
	for _, a := range []updateAction{
		{name: "approve", short: "Approve a ClusterUpdate so the roller may start it",
			long: "Set spec.approve on the update and, when it is pending, its phase to approved.",
			from: []string{"", updatePending, updateApproved}, to: updateApproved, approve: true},
		{name: "pause", short: "Ask the roller to pause a ClusterUpdate before its next step",
			long: "Record a pause request (phase paused) in the update's status; the roller stops before its next step.",
			from: []string{updateApproved, updateRolling}, to: updatePaused},
		{name: "resume", short: "Ask the roller to resume a paused ClusterUpdate",
			long: "Record a resume request (phase approved) in a paused update's status; the roller continues with the next step.",
			from: []string{updatePaused}, to: updateApproved},
		{name: "rollback", short: "Ask the roller to roll a ClusterUpdate back",
			long: "Record a rollback request (phase rolling-back) in the update's status; the roller reverts the nodes it updated, last first.",
			from: []string{updateApproved, updateRolling, updatePaused, updateFailed, updateDone}, to: updateRollingBack},
	} {
		cmd.AddCommand(newUpdateActionCmd(s, a))
	}
	return cmd
}

func newUpdateStatusCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "status NAME",
		Short:   "Show a ClusterUpdate's phase, approval and steps",
		Example: "  kctl update status release-0-5-0",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			u, _, err := getUpdate(cmd, c, args[0])
			if err != nil {
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
			for i, st := range u.Status.Steps {
				lines = append(lines, fmt.Sprintf("  step %d: %s %s %s", i+1, strings.Join(st.Nodes, ","), orUnknown(st.State), st.Message))
			}
			_, err = fmt.Fprintln(s.Out, strings.Join(lines, "\n"))
			return err
		},
	}
}

func newUpdateActionCmd(s Streams, a updateAction) *cobra.Command {
	return &cobra.Command{
		Use:     a.name + " NAME",
		Short:   a.short,
		Long:    a.long + " The write is conditional on the stored object not having changed since it was read.",
		Example: "  kctl update " + a.name + " release-0-5-0",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			u, o, err := getUpdate(cmd, c, args[0])
			if err != nil {
				return err
			}
			from := u.Status.Phase
			if !slices.Contains(a.from, from) {
				return fmt.Errorf("cannot %s ClusterUpdate %q in phase %s", a.name, u.Metadata.Name, orUnknown(from))
			}
			if a.approve {
				u.Spec.Approve = true
			}
			u.Status.Phase = a.to
			u.Status.Message = fmt.Sprintf("%s requested with kctl update %s", a.name, a.name)
			if _, err := c.Put(cmdContext(cmd), api.KindClusterUpdate, u.Metadata.Name, u, &o); err != nil {
				return fmt.Errorf("%s ClusterUpdate %s: %w", a.name, u.Metadata.Name, err)
			}
			_, err = fmt.Fprintf(s.Out, "ClusterUpdate %q: phase %s → %s (%s recorded for the roller)\n", u.Metadata.Name, orUnknown(from), u.Status.Phase, a.name)
			return err
		},
	}
}

// getUpdate reads a stored ClusterUpdate and its ModifyIndex.
func getUpdate(cmd *cobra.Command, c *client.Client, name string) (*api.ClusterUpdate, uint64, error) {
	o, err := c.Get(cmdContext(cmd), api.KindClusterUpdate, name)
	if err != nil {
		return nil, 0, fmt.Errorf("get ClusterUpdate %s: %w", name, err)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		return nil, 0, fmt.Errorf("decode ClusterUpdate %s: %w", name, err)
	}
	return &u, o.ModifyIndex, nil
}
