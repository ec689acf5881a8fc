package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/manifest"
)

// TestValidateRefusesDeepNesting runs kctl kubernetes validate -f on files
// nested a million deep: kctl must print one error per file naming the
// file, the line and the limit, and exit 1 — not die of a stack overflow.
func TestValidateRefusesDeepNesting(t *testing.T) {
	const deep = 1_000_000
	dir := t.TempDir()
	files := map[string]string{
		"brackets.hcl": "resource \"kcore_kubernetes_cluster\" \"c\" {\n  x = " + strings.Repeat("[", deep) + "\n}\n",
		"blocks.hcl":   strings.Repeat("a {\n", deep),
		"flow.yaml":    "kind: KubernetesCluster\nspec: " + strings.Repeat("a: [", deep) + "\n",
		"braces.yaml":  strings.Repeat("{", deep),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	limit := fmt.Sprintf("nested deeper than the limit of %d levels", manifest.MaxDepth)
	for name := range files {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			out, _, code := execKctl(t, "kubernetes", "validate", "-f", path)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 1 || len(lines) != 2 {
				t.Fatalf("exit %d, output:\n%.800s\nwant one error and the summary, exit 1", code, out)
			}
			if !strings.HasPrefix(lines[0], path+":") || !strings.Contains(lines[0], limit) {
				t.Fatalf("error %q: want %s:LINE: … %s", lines[0], path, limit)
			}
			if lines[1] != "1 error in 1 file" {
				t.Fatalf("summary %q", lines[1])
			}
		})
	}
	// Standard input (-f -) goes through the same readers.
	for _, name := range []string{"brackets.hcl", "flow.yaml"} {
		var out, errOut bytes.Buffer
		root := NewKctl(Streams{In: strings.NewReader(files[name]), Out: &out, Err: &errOut})
		root.SetArgs([]string{"kubernetes", "validate", "-f", "-"})
		if err := root.Execute(); ExitCode(err) != 1 || !strings.HasPrefix(out.String(), "<stdin>:") || !strings.Contains(out.String(), limit) {
			t.Fatalf("stdin %s: %v, output:\n%.800s", name, err, out.String())
		}
	}
	// A directory holding all of them reports each.
	out, _, code := execKctl(t, "kubernetes", "validate", "-f", dir)
	if code != 1 || strings.Count(out, limit) != len(files) {
		t.Fatalf("exit %d, output:\n%.800s", code, out)
	}
}
