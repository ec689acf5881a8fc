package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newCertRevokeCmd is `kctl cert revoke SERIAL`.
func newCertRevokeCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke SERIAL",
		Short: "Revoke a certificate the controller issued, by serial number",
		Long: `Revoke a certificate the controller issued (a person's or a node's) by its
serial number in hex, as 'openssl x509 -noout -serial' prints it or as the
Credential records list it (kctl get Credential). Every controller replica
refuses the certificate from then on: new connections fail their TLS
handshake, requests on open connections get 401. Needs cluster-admin.

The revocation is kept until the certificate expires. To replace a node's key,
use 'kctl node token create --node ID --rekey' instead: it revokes all of the
node's certificates when the new one is issued.`,
		Example: `  kctl cert revoke 5f3a9c0e1d2b4a6f
  openssl x509 -noout -serial -in node.crt   # serial=5F3A9C0E1D2B4A6F`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			r, err := c.RevokeCert(cmdContext(cmd), args[0])
			if err != nil {
				return fmt.Errorf("revoke certificate: %w", err)
			}
			_, err = fmt.Fprintf(s.Out, "revoked %s certificate %s of %s (it expires %s)\n", r.Role, r.Serial, r.Subject, r.NotAfter)
			return err
		},
	}
}
