package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCompletionCmd(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script for kctl",
		Long: `Print a shell completion script for kctl to standard output.

bash (needs the bash-completion package):
  current shell:  source <(kctl completion bash)
  every shell:    kctl completion bash > ~/.local/share/bash-completion/completions/kctl
  system-wide:    kctl completion bash | sudo tee /etc/bash_completion.d/kctl >/dev/null

zsh:
  if completion is not enabled yet, add to ~/.zshrc:  autoload -U compinit; compinit
  current shell:  source <(kctl completion zsh)
  every shell:    kctl completion zsh > "${fpath[1]}/_kctl"   (then start a new shell)

fish:
  current shell:  kctl completion fish | source
  every shell:    kctl completion fish > ~/.config/fish/completions/kctl.fish`,
		Args:                  cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs:             []string{"bash", "zsh", "fish"},
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			var err error
			switch args[0] {
			case "bash":
				err = root.GenBashCompletionV2(s.Out, true)
			case "zsh":
				err = root.GenZshCompletion(s.Out)
			case "fish":
				err = root.GenFishCompletion(s.Out, true)
			}
			if err != nil {
				return fmt.Errorf("generate %s completion: %w", args[0], err)
			}
			return nil
		},
	}
}
