package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/kctlconfig"
)

// Names of kctl's global flags, shared by every command that reads the kctl
// config or talks to a controller.
const (
	flagContext = "context"
	flagConfig  = "config"
)

// bindCtlFlags adds the global --context and --config flags to cmd as
// persistent flags, so they work before or after any subcommand name
// (kctl --context lab controller members, kctl controller members --context lab).
// Commands read them with ctlConfigPath and ctlContext wherever they were bound.
func bindCtlFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.String(flagContext, "", "kctl context to use instead of the current one (see kctl config get-contexts)")
	pf.String(flagConfig, "", "kctl config file (default $"+kctlconfig.EnvConfig+", else ~/.kcore/config)")
}

// flagString returns the value of flag name as cmd sees it, "" when the flag
// is not defined for cmd.
func flagString(cmd *cobra.Command, name string) string {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return ""
	}
	return f.Value.String()
}

// ctlConfigPath is the kctl config file: --config, else $KCTL_CONFIG, else ~/.kcore/config.
func ctlConfigPath(cmd *cobra.Command) (string, error) {
	return kctlconfig.ResolvePath(flagString(cmd, flagConfig), os.Getenv(kctlconfig.EnvConfig))
}

// loadCtlConfig loads the kctl config file and returns it with its path.
func loadCtlConfig(cmd *cobra.Command) (*kctlconfig.Config, string, error) {
	path, err := ctlConfigPath(cmd)
	if err != nil {
		return nil, "", err
	}
	cfg, err := kctlconfig.Load(path)
	if err != nil {
		return nil, "", err
	}
	return cfg, path, nil
}

// ctlContext returns the context named by --context, else the current one.
func ctlContext(cmd *cobra.Command, cfg *kctlconfig.Config) (*kctlconfig.Context, error) {
	if name := flagString(cmd, flagContext); name != "" {
		return cfg.Context(name)
	}
	return cfg.Current()
}

// ctlClient builds a controller client from the selected context.
func ctlClient(cmd *cobra.Command) (*client.Client, *kctlconfig.Context, error) {
	cfg, _, err := loadCtlConfig(cmd)
	if err != nil {
		return nil, nil, err
	}
	x, err := ctlContext(cmd, cfg)
	if err != nil {
		return nil, nil, err
	}
	c, err := clientFor(x)
	if err != nil {
		return nil, nil, err
	}
	return c, x, nil
}

// clientFor builds a controller client from a context.
func clientFor(x *kctlconfig.Context) (*client.Client, error) {
	creds, err := x.Credentials()
	if err != nil {
		return nil, err
	}
	c, err := client.New(client.Config{Addresses: x.Controllers, CA: creds.CA, Cert: creds.Cert, Key: creds.Key})
	if err != nil {
		return nil, fmt.Errorf("context %q: %w", x.Name, err)
	}
	return c, nil
}

// cmdContext is the command's context, or Background when it has none.
func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// newTable returns a tabwriter for aligned columns; cells are separated by
// tabs and the caller must Flush it.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
}

// row writes one table row.
func row(w io.Writer, cells ...string) error {
	_, err := fmt.Fprintln(w, strings.Join(cells, "\t"))
	return err
}

// ErrNotConfirmed is returned when the user answers no, or when a
// confirmation is needed but stdin is not a terminal.
var ErrNotConfirmed = errors.New("not confirmed")

// confirm asks question with askYes. It refuses (with ErrNotConfirmed and a
// hint about yesFlag) when s.In is not a terminal, so a script never answers
// by accident.
func confirm(s Streams, question, yesFlag string) error {
	yes, err := askYes(s, question)
	switch {
	case errors.Is(err, errNoTTY):
		return fmt.Errorf("%w: %w; pass %s to go ahead without asking", ErrNotConfirmed, err, yesFlag)
	case err != nil:
		return err
	case !yes:
		return fmt.Errorf("%w: answered no", ErrNotConfirmed)
	}
	return nil
}
