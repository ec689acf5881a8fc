package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKctlDocsUpToDate fails when docs/kctl.md differs from the command
// tree; regenerate it with go test ./pkg/cli -update (or kctl gen-docs).
func TestKctlDocsUpToDate(t *testing.T) {
	got := GenerateDocs(NewKctl(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}))
	path := filepath.Join("..", "..", "docs", "kctl.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("docs/kctl.md is stale: run go test ./pkg/cli -run TestKctlDocsUpToDate -update")
	}
}

func TestEveryCommandHasHelpAndExamples(t *testing.T) {
	root := NewKctl(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	for _, path := range [][]string{
		{"kubernetes", "apply"}, {"kubernetes", "plan"}, {"kubernetes", "diff"}, {"kubernetes", "get"},
		{"kubernetes", "list"}, {"kubernetes", "health"}, {"kubernetes", "delete"}, {"kubernetes", "scale"}, {"kubernetes", "replace"}, {"kubernetes", "rotate-ca"},
		{"apply"}, {"update", "list"}, {"node", "get"}, {"node", "list"}, {"update", "status"}, {"update", "approve"}, {"update", "pause"}, {"update", "resume"}, {"update", "rollback"},
	} {
		cmd, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		if cmd.Short == "" || cmd.Example == "" {
			t.Errorf("kctl %s: missing short help or examples", strings.Join(path, " "))
		}
	}
}
