package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// strictGroups makes every command that only groups subcommands refuse an
// unknown subcommand: cobra prints the group's help and exits 0 for
// `kctl kubernetes lsit`, which a script cannot tell from success. With no
// argument a group still prints its help and exits 0.
func strictGroups(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		strictGroups(sub)
	}
	if !cmd.HasSubCommands() || cmd.Run != nil || cmd.RunE != nil {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return unknownCommand(c, args[0])
	}
}

// unknownCommand is the error for `PARENT NAME` when PARENT has no
// subcommand NAME, with cobra's suggestions when there are any.
func unknownCommand(parent *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, parent.CommandPath())
	if parent.SuggestionsMinimumDistance <= 0 {
		parent.SuggestionsMinimumDistance = 2
	}
	if s := parent.SuggestionsFor(name); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return fmt.Errorf("%s\n\nRun '%s --help' for usage", msg, parent.CommandPath())
}
