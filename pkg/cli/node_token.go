package cli

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/kctlconfig"
)

// newNodeCmd is the `kctl node` group.
func newNodeCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Manage the machines kcore runs on",
		Args:  cobra.NoArgs,
	}
	token := &cobra.Command{
		Use:   "token",
		Short: "Create join tokens that let a node agent register",
		Args:  cobra.NoArgs,
	}
	token.AddCommand(newNodeTokenCreateCmd(s))
	cmd.AddCommand(token, newNodeListCmd(s), newNodeGetCmd(s))
	return cmd
}

// checkTokenTTL refuses a token lifetime outside the controller's bounds
// before asking it.
func checkTokenTTL(ttl time.Duration) error {
	if ttl < apiv1.MinTokenTTL || ttl > apiv1.MaxTokenTTL {
		return fmt.Errorf("create join token: --ttl %s: want a duration from %s to %s (7 days), such as 1h", ttl, apiv1.MinTokenTTL, apiv1.MaxTokenTTL)
	}
	return nil
}

type tokenCreateOptions struct {
	node  string
	rekey bool
	ttl   time.Duration
	caOut string
}

func newNodeTokenCreateCmd(s Streams) *cobra.Command {
	var o tokenCreateOptions
	cmd := &cobra.Command{
		Use:   "create --node ID [--ttl D] [--rekey]",
		Short: "Create a one-time join token for one node id",
		Long: `Create a one-time join token for exactly one node id. The node agent with that
--node-id presents it once to get its node certificate (whose name is the node
id); the token then stops working, and it expires after --ttl (1m to 168h)
even when unused. The controller stores only its hash.

A token registers only a node that is not registered yet: one that has no
certificate record, no NodeIdentity and has never reported facts. Presented
for another node id, or for a node that registered meanwhile, it fails like an
unknown token and stays unused.

To give a registered node a new key (a reinstalled machine, a lost or leaked
key), create a re-key token with --rekey: joining with it revokes every
earlier certificate of the node, on every controller, at once.

Node certificates are short-lived (the controller's --node-cert-validity,
24h by default); a running agent renews its own at two thirds of the lifetime,
and an agent whose machine was off past it renews the expired certificate at
start, within the controller's --node-cert-grace (30 days by default), so a
token is needed only once per machine.

The agent verifies the controllers with the controller CA: --ca-out writes it
to a file to copy to the node along with the token.`,
		Example: `  kctl node token create --node node-105
  kctl node token create --node node-105 --ttl 15m --ca-out ca.crt
  # a reinstalled machine: new key, the old certificates revoked
  kctl node token create --node node-105 --rekey`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNodeTokenCreate(cmd, s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.node, "node", "", "the node id the token registers (required)")
	f.BoolVar(&o.rekey, "rekey", false, "re-key a registered node: joining revokes its earlier certificates")
	f.DurationVar(&o.ttl, "ttl", time.Hour, "how long the token stays valid (1m to 168h)")
	f.StringVar(&o.caOut, "ca-out", "", "also write the controller CA certificate to this file")
	_ = cmd.MarkFlagRequired("node")
	return cmd
}

func runNodeTokenCreate(cmd *cobra.Command, s Streams, o tokenCreateOptions) error {
	if err := api.CheckNodeID(o.node); err != nil {
		return fmt.Errorf("create join token: --node: %w", err)
	}
	if err := checkTokenTTL(o.ttl); err != nil {
		return err
	}
	c, x, err := ctlClient(cmd)
	if err != nil {
		return err
	}
	defer c.Close()
	tok, err := c.CreateToken(cmdContext(cmd), o.node, o.ttl, o.rekey)
	if err != nil {
		return fmt.Errorf("create join token: %w", err)
	}
	caFile := o.caOut
	if o.caOut != "" {
		creds, err := x.Credentials()
		if err != nil {
			return err
		}
		if err := kctlconfig.WriteFileAtomic(o.caOut, creds.CA, fs.FileMode(0o644)); err != nil {
			return fmt.Errorf("write controller ca: %w", err)
		}
	} else {
		caFile = "ca.crt"
	}
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(s.Out, format, a...)
		}
	}
	p("%s\n\n", tok.Token)
	if tok.Rekey {
		p("One use, for node %s only; expires %s. Joining with it revokes the node's earlier certificates.\n", tok.NodeID, tok.Expires)
	} else {
		p("One use, for node %s only; expires %s.\n", tok.NodeID, tok.Expires)
	}
	if o.caOut != "" {
		p("Wrote the controller CA to %s.\n", o.caOut)
	} else {
		p("ca.crt is the controller CA (ca.crt of 'kctl controller init', or --ca-out FILE).\n")
	}
	if tok.Rekey {
		p("On the node, remove the old credentials (ROOT/var/lib/kcore/agent) and run:\n\n  kcore-node-agent")
	} else {
		p("On the new node run:\n\n  kcore-node-agent")
	}
	for _, a := range x.Controllers {
		p(" --controller %s", a)
	}
	p(" --ca-file %s --join-token %s --node-id %s\n", caFile, tok.Token, tok.NodeID)
	return err
}
