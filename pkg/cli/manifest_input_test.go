package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateFromStdin(t *testing.T) {
	for _, file := range []string{"examples/reference/cluster.yaml", "examples/hcl/cluster.hcl", "examples/updates/release-0-5-0.hcl"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", file))
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			root := NewKctl(Streams{In: bytes.NewReader(data), Out: &out, Err: &errOut})
			root.SetArgs([]string{"kubernetes", "validate", "-f", "-"})
			if err := root.Execute(); err != nil {
				t.Fatalf("validate -f - of %s: %v\n%s%s", file, err, out.String(), errOut.String())
			}
		})
	}
}

func TestStdinErrorsNameStdin(t *testing.T) {
	var out, errOut bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader("kind: KubernetesCluster\nmetadata: {name: x}\nspec:\n  clusterDsn: 1.2.3.4\n"), Out: &out, Err: &errOut})
	root.SetArgs([]string{"kubernetes", "validate", "-f", "-"})
	if err := root.Execute(); err == nil {
		t.Fatal("an unknown field from stdin validated")
	}
	if !strings.Contains(out.String(), "<stdin>:4") {
		t.Fatalf("diagnostics do not name <stdin> and the line:\n%s", out.String())
	}
}

func TestStdinBounded(t *testing.T) {
	big := strings.NewReader("# " + strings.Repeat("x", maxStdinManifest) + "\n")
	docs, ds := readStdin(big)
	if len(docs) != 0 || !ds.HasErrors() || !strings.Contains(ds[0].Message, "more than") {
		t.Fatalf("oversized stdin: %d docs, %v", len(docs), ds)
	}
}

func TestLooksLikeHCL(t *testing.T) {
	for in, want := range map[string]bool{
		"# c\n\nresource \"kcore_kubernetes_cluster\" \"x\" {}": true,
		"// c\nresource\t\"a\" \"b\" {}":                        true,
		"kind: KubernetesCluster\n":                             false,
		"---\nresource: x\n":                                    false,
		"":                                                      false,
	} {
		if got := looksLikeHCL([]byte(in)); got != want {
			t.Errorf("looksLikeHCL(%q) = %v, want %v", in, got, want)
		}
	}
}
