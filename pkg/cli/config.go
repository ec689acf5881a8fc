package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newConfigCmd is the `kctl config` group: the contexts in the kctl config file.
func newConfigCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and switch kctl contexts",
		Long: `Show and switch kctl contexts.

A context names the controllers of one kcore installation and the credentials
to reach them as one person. Contexts live in ~/.kcore/config (or the file
named by $KCTL_CONFIG or --config); --context picks one for a single command.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newGetContextsCmd(s), newUseContextCmd(s), newCurrentContextCmd(s), newDeleteContextCmd(s))
	return cmd
}

func newGetContextsCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "get-contexts",
		Short:   "List the contexts; * marks the current one",
		Example: `  kctl config get-contexts`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := loadCtlConfig(cmd)
			if err != nil {
				return err
			}
			tw := newTable(s.Out)
			if err := row(tw, "CURRENT", "NAME", "USER", "ROLE", "CONTROLLERS"); err != nil {
				return err
			}
			for _, x := range cfg.Contexts {
				cur := ""
				if x.Name == cfg.CurrentContext {
					cur = "*"
				}
				if err := row(tw, cur, x.Name, x.User, x.Role, strings.Join(x.Controllers, ",")); err != nil {
					return err
				}
			}
			return tw.Flush()
		},
	}
}

func newUseContextCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "use-context NAME",
		Short:   "Make NAME the current context",
		Example: `  kctl config use-context lab`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := loadCtlConfig(cmd)
			if err != nil {
				return err
			}
			if err := cfg.Use(args[0]); err != nil {
				return fmt.Errorf("%w (see kctl config get-contexts)", err)
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "switched to context %q\n", args[0])
			return err
		},
	}
}

func newCurrentContextCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the current context's name",
		Example: `  kctl config current-context`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := loadCtlConfig(cmd)
			if err != nil {
				return err
			}
			x, err := ctlContext(cmd, cfg)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(s.Out, x.Name)
			return err
		},
	}
}

func newDeleteContextCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "delete-context NAME",
		Short: "Delete a context and the credentials it holds",
		Long: `Delete a context and the credentials it holds from the kctl config file.
When it was the current context, no context is current afterwards.`,
		Example: `  kctl config delete-context old-lab`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := loadCtlConfig(cmd)
			if err != nil {
				return err
			}
			if err := cfg.Remove(args[0]); err != nil {
				return err
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.Out, "deleted context %q\n", args[0])
			return err
		},
	}
}
