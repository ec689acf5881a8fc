package cli

import (
	"strings"
	"testing"
)

func TestCompletion(t *testing.T) {
	tests := []struct {
		shell string
		marks []string
	}{
		{"bash", []string{"kctl", "complete -o default -F __start_kctl kctl"}},
		{"zsh", []string{"#compdef kctl", "kctl"}},
		{"fish", []string{"complete -c kctl", "kctl"}},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			out, err := runKctl(t, "completion", tt.shell)
			if err != nil {
				t.Fatalf("kctl completion %s: %v", tt.shell, err)
			}
			for _, m := range tt.marks {
				if !strings.Contains(out, m) {
					t.Errorf("output does not contain %q", m)
				}
			}
		})
	}
}

func TestCompletionRejectsUnknownShell(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "powershell-ish"}, {"completion", "bash", "zsh"}} {
		if _, err := runKctl(t, args...); err == nil {
			t.Errorf("kctl %v: want an error", args)
		}
	}
}

func TestCompletionHelpExplainsInstall(t *testing.T) {
	out, err := runKctl(t, "completion", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"source <(kctl completion bash)", "kctl completion zsh", "~/.config/fish/completions/kctl.fish"} {
		if !strings.Contains(out, want) {
			t.Errorf("help does not mention %q", want)
		}
	}
}
