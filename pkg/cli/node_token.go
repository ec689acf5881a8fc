package cli

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/cobra"

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

func newNodeTokenCreateCmd(s Streams) *cobra.Command {
	var (
		ttl   time.Duration
		caOut string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a one-time join token for a new node",
		Long: `Create a one-time join token. A node agent presents it once to get its own node
certificate (whose name is the node id); the token then stops working, and it
expires after --ttl even when unused. The controller stores only its hash.

The agent verifies the controllers with the controller CA: --ca-out writes it
to a file to copy to the node along with the token.`,
		Example: `  kctl node token create
  kctl node token create --ttl 15m --ca-out ca.crt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, x, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			tok, err := c.CreateToken(cmdContext(cmd), ttl)
			if err != nil {
				return fmt.Errorf("create join token: %w", err)
			}
			caFile := caOut
			if caOut != "" {
				creds, err := x.Credentials()
				if err != nil {
					return err
				}
				if err := kctlconfig.WriteFileAtomic(caOut, creds.CA, fs.FileMode(0o644)); err != nil {
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
			p("One use; expires %s.\n", tok.Expires)
			if caOut != "" {
				p("Wrote the controller CA to %s.\n", caOut)
			} else {
				p("ca.crt is the controller CA (ca.crt of 'kctl controller init', or --ca-out FILE).\n")
			}
			p("On the new node run:\n\n  kcore-node-agent")
			for _, a := range x.Controllers {
				p(" --controller %s", a)
			}
			p(" --ca-file %s --join-token %s --node-id NODE-ID\n", caFile, tok.Token)
			return err
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", time.Hour, "how long the token stays valid")
	cmd.Flags().StringVar(&caOut, "ca-out", "", "also write the controller CA certificate to this file")
	return cmd
}
