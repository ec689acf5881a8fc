package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

// memberProbeTimeout bounds the health probe kctl controller members sends
// each replica.
const memberProbeTimeout = 2 * time.Second

// memberView is one row of kctl controller members: the raft member as
// the leader knows it and what the replica itself answered.
type memberView struct {
	apiv1.Member
	// Reachable is true when the replica answered /v1/health.
	Reachable bool `json:"reachable"`
	// State is the replica's own raft state, or why it did not answer.
	State string `json:"state"`
	// Schema is the store schema the replica writes, 0 when unknown.
	Schema int `json:"schema,omitempty"`
}

func newControllerMembersCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the controller replicas, which one leads, and which answer",
		Long: `List the controller replicas of the Raft configuration as the leader knows
them, then ask each replica's own /v1/health (at most 2 s each, all at once):
STATE is the replica's raft state (leader, follower, …) or "unreachable" when it
did not answer, SCHEMA the newest store schema its build reads and writes —
the number ClusterUpdate schema gates compare. The cluster writes the oldest
schema any member records, so a replica on an older release keeps reading
the log during a rolling upgrade. A replica without an HTTP address cannot be
asked.`,
		Example: `  kctl controller members
  kctl controller members -o json | jq '.[] | select(.reachable | not) | .id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			ms, err := c.Members(cmdContext(cmd))
			if err != nil {
				return fmt.Errorf("list members: %w", err)
			}
			return printMembers(s, probeMembers(cmdContext(cmd), c, ms), output)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// probeMembers asks every member with an HTTP address for its health, in
// parallel, each within memberProbeTimeout.
func probeMembers(ctx context.Context, c *client.Client, ms []apiv1.Member) []memberView {
	out := make([]memberView, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		out[i] = memberView{Member: m, State: "-"}
		if m.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func(v *memberView) {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, memberProbeTimeout)
			defer cancel()
			h, err := c.HealthOf(pctx, v.HTTPAddr)
			if err != nil {
				v.State = "unreachable"
				return
			}
			v.Reachable, v.State, v.Schema = true, h.Role, h.Schema
		}(&out[i])
	}
	wg.Wait()
	return out
}

func printMembers(s Streams, ms []memberView, output string) error {
	if done, err := printStructured(s, ms, output); done {
		return err
	}
	tw := newTable(s.Out)
	if err := row(tw, "ID", "RAFT ADDRESS", "HTTP ADDRESS", "SUFFRAGE", "LEADER", "STATE", "SCHEMA"); err != nil {
		return err
	}
	for _, m := range ms {
		leader, httpAddr, schema := "", m.HTTPAddr, "-"
		if m.Leader {
			leader = "*"
		}
		if httpAddr == "" {
			httpAddr = "-"
		}
		if m.Schema > 0 {
			schema = strconv.Itoa(m.Schema)
		}
		if err := row(tw, m.ID, m.RaftAddr, httpAddr, m.Suffrage, leader, m.State, schema); err != nil {
			return err
		}
	}
	return tw.Flush()
}

func newControllerAddCmd(s Streams) *cobra.Command {
	var req apiv1.AddMemberRequest
	cmd := &cobra.Command{
		Use:   "add --id ID --raft-addr HOST:PORT --http-addr HOST:PORT",
		Short: "Add a controller replica as a voter",
		Long: `Add a controller replica to the Raft configuration as a voter.

The replica must already run (kcore-controller with its own --pki-dir from
'kctl controller init'); usually 'kcore-controller --join' adds itself and this
command is only needed to re-add a replica by hand.`,
		Example: `  kctl controller add --id controller-3 --raft-addr 10.0.0.4:7000 --http-addr 10.0.0.4:7443`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.AddMember(cmdContext(cmd), req); err != nil {
				return fmt.Errorf("add member %s: %w", req.ID, err)
			}
			_, err = fmt.Fprintf(s.Out, "added %s (raft %s, http %s) as a voter\n", req.ID, req.RaftAddr, req.HTTPAddr)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.ID, "id", "", "raft id of the replica")
	f.StringVar(&req.RaftAddr, "raft-addr", "", "raft transport address of the replica")
	f.StringVar(&req.HTTPAddr, "http-addr", "", "API address of the replica")
	for _, n := range []string{"id", "raft-addr", "http-addr"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

func newControllerRemoveCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a controller replica",
		Long: `Remove a controller replica from the Raft configuration.

The controller refuses a removal that would leave too few voters for a quorum,
or that would remove the last voter.`,
		Example: `  kctl controller remove controller-2`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			id := args[0]
			err = c.RemoveMember(cmdContext(cmd), id)
			var apiErr *client.APIError
			if errors.Is(err, client.ErrQuorumLoss) && errors.As(err, &apiErr) {
				return fmt.Errorf("refused to remove %s: %s", id, apiErr.Message)
			}
			if err != nil {
				return fmt.Errorf("remove member %s: %w", id, err)
			}
			_, err = fmt.Fprintf(s.Out, "removed %s\n", id)
			return err
		},
	}
}
