package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestUnknownSubcommandFails(t *testing.T) {
	e := newKctlEnv(t)
	tests := []struct {
		args    []string
		suggest string
	}{
		{[]string{"kubernetes", "lsit"}, "list"},
		{[]string{"update", "lsit"}, ""},
		{[]string{"controller", "membres"}, "members"},
		{[]string{"node", "tokn"}, "token"},
		{[]string{"lsit"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := e.run(tt.args...)
			if err == nil {
				t.Fatalf("kctl %v: no error", tt.args)
			}
			if ExitCode(err) != 1 {
				t.Errorf("exit code %d, want 1", ExitCode(err))
			}
			if !strings.Contains(err.Error(), "unknown command") {
				t.Errorf("error %q does not say unknown command", err)
			}
			if tt.suggest != "" && !strings.Contains(err.Error(), tt.suggest) {
				t.Errorf("error %q does not suggest %q", err, tt.suggest)
			}
		})
	}
}

func TestGroupWithoutArgsPrintsHelp(t *testing.T) {
	e := newKctlEnv(t)
	out, _, err := e.run("kubernetes")
	if err != nil {
		t.Fatalf("kctl kubernetes: %v", err)
	}
	if !strings.Contains(out, "Available Commands") {
		t.Errorf("kctl kubernetes printed no help:\n%s", out)
	}
}

// TestEveryGroupIsStrict walks the whole tree: no command that only groups
// others may accept an argument silently.
func TestEveryGroupIsStrict(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && c.HasParent() && c.RunE == nil && c.Run == nil {
			t.Errorf("%s groups commands but has no RunE refusing unknown ones", c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewKctl(Streams{}))
}
