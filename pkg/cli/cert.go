package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/kctlconfig"
)

// newCertCmd is the `kctl cert` group: certificates for people.
func newCertCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cert",
		Short: "Issue client certificates for people, revoke certificates",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newCertIssueCmd(s), newCertRevokeCmd(s))
	return cmd
}

type certIssueOptions struct {
	role, name, contextName, out string
	force                        bool
}

func newCertIssueCmd(s Streams) *cobra.Command {
	var o certIssueOptions
	cmd := &cobra.Command{
		Use:   "issue --role viewer|operator|cluster-admin --name NAME",
		Short: "Issue a certificate for a person and write a kctl context for it",
		Long: `Ask the controller to issue a client certificate for a person, and write a kctl
context holding it.

Roles: viewer reads; operator reads, approves updates and scales;
cluster-admin may do everything, including applying and deleting clusters.

Without --out the context is added to your kctl config (not made current);
with --out FILE a standalone kctl config holding only that context is written
(0600) to hand to the person, who uses it with KCTL_CONFIG=FILE or
--config FILE. Every issued certificate is recorded in the audit log.`,
		Example: `  # A read-only context for yourself:
  kctl cert issue --role viewer --name alice
  kctl --context alice@lab controller members

  # A config file for a colleague:
  kctl cert issue --role operator --name bob --out bob.kctl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCertIssue(cmd, s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.role, "role", "", "role of the certificate: viewer, operator or cluster-admin")
	f.StringVar(&o.name, "name", "", "the person's name (the certificate's common name)")
	f.StringVar(&o.contextName, "context-name", "", "name of the context to write (default NAME@CURRENT-CONTEXT)")
	f.StringVar(&o.out, "out", "", "write a standalone kctl config file instead of adding to yours")
	f.BoolVar(&o.force, "force", false, "overwrite an existing context of that name, or an existing --out file")
	_ = cmd.MarkFlagRequired("role")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func runCertIssue(cmd *cobra.Command, s Streams, o certIssueOptions) error {
	switch o.role {
	case apiv1.RoleViewer, apiv1.RoleOperator, apiv1.RoleClusterAdmin:
	default:
		return fmt.Errorf("issue certificate: --role %q: want viewer, operator or cluster-admin", o.role)
	}
	cfg, cfgPath, err := loadCtlConfig(cmd)
	if err != nil {
		return err
	}
	x, err := ctlContext(cmd, cfg)
	if err != nil {
		return err
	}
	name := o.contextName
	if name == "" {
		name = o.name + "@" + x.Name
	}
	target, targetPath := cfg, cfgPath
	if o.out != "" {
		target, targetPath = kctlconfig.New(), o.out
		if _, err := os.Stat(o.out); err == nil && !o.force {
			return fmt.Errorf("issue certificate: %s: %w; pass --force to overwrite it", o.out, ErrCredentialsExist)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("issue certificate: %w", err)
		}
	} else if cfg.Has(name) && !o.force {
		return fmt.Errorf("issue certificate: context %q in %s: %w; pass --force or --context-name", name, cfgPath, ErrCredentialsExist)
	}
	c, err := clientFor(x)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.IssueCert(cmdContext(cmd), o.role, o.name)
	if err != nil {
		return fmt.Errorf("issue certificate: %w", err)
	}
	nx := kctlconfig.Context{Name: name, Controllers: x.Controllers, Role: o.role, User: o.name}
	nx.SetCredentials(kctlconfig.Credentials{CA: []byte(resp.CA), Cert: []byte(resp.Cert), Key: []byte(resp.Key)})
	target.Set(nx)
	if o.out != "" {
		target.CurrentContext = name
	}
	if err := target.Save(targetPath); err != nil {
		return fmt.Errorf("issue certificate: %w", err)
	}
	if o.out != "" {
		_, err = fmt.Fprintf(s.Out, "issued a %s certificate for %s and wrote it as context %q to %s\nhand it over; they use it with: KCTL_CONFIG=%s kctl controller members\n", o.role, o.name, name, targetPath, targetPath)
		return err
	}
	_, err = fmt.Fprintf(s.Out, "issued a %s certificate for %s and added context %q to %s\nuse it with: kctl --context %s ...  or  kctl config use-context %s\n", o.role, o.name, name, targetPath, name, name)
	return err
}
