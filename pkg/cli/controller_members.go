package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

func newControllerMembersCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the controller replicas and which one leads",
		Example: `  kctl controller members
  kctl controller members -o json`,
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
			return printMembers(s, ms, output)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func printMembers(s Streams, ms []apiv1.Member, output string) error {
	if done, err := printStructured(s, ms, output); done {
		return err
	}
	tw := newTable(s.Out)
	if err := row(tw, "ID", "RAFT ADDRESS", "HTTP ADDRESS", "SUFFRAGE", "LEADER"); err != nil {
		return err
	}
	for _, m := range ms {
		leader, httpAddr := "", m.HTTPAddr
		if m.Leader {
			leader = "*"
		}
		if httpAddr == "" {
			httpAddr = "-"
		}
		if err := row(tw, m.ID, m.RaftAddr, httpAddr, m.Suffrage, leader); err != nil {
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
