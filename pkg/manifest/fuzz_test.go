package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seed adds every file with one of the extensions under the examples and
// this package's testdata to the fuzz corpus.
func seed(f *testing.F, exts ...string) {
	for _, root := range []string{"../../examples", "testdata"} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			for _, e := range exts {
				if filepath.Ext(p) == e {
					if data, err := os.ReadFile(p); err == nil {
						f.Add(data)
					}
				}
			}
			return nil
		})
	}
}

// FuzzParseYAML: the YAML reader and the checks never panic, whatever the input.
func FuzzParseYAML(f *testing.F) {
	seed(f, ".yaml", ".yml")
	f.Add([]byte(yamlCluster))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("kind: ClusterUpdate\nspec: {<<: [&x {version: 1}, *x]}\n"))
	for _, deep := range []string{"[", "{", "a: [", "- ", "? ", "[\n", "\"x\": {"} {
		f.Add([]byte("spec:\n  x: " + strings.Repeat(deep, 3*MaxDepth)))
	}
	f.Add([]byte("a: |\n  [[[[\nb: '[[[['' [['\nc: \"[[\\\"[[\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _ := ParseYAML("f.yaml", data)
		Check(docs)
	})
}

// FuzzParseHCL: the HCL reader and the checks never panic, whatever the input.
func FuzzParseHCL(f *testing.F) {
	seed(f, ".hcl")
	f.Add([]byte(hclCluster))
	f.Add([]byte(hclUpdate))
	f.Add([]byte("resource \"kcore_cluster_update\" \"u\" {\n  batch_size = 10737e4182400\n}\n"))
	for _, deep := range []string{"[", "{a=", "(", "!", "-", "+1", "true ? 1 : ", "[(0)]", "\"${", "%{ if true }", "<<EOT\n${", "a {\n"} {
		f.Add([]byte("resource \"kcore_cluster_update\" \"u\" {\n  x = " + strings.Repeat(deep, 3*MaxDepth) + "\n}\n"))
	}
	f.Add([]byte("x = <<EOT\n[[[[\n EOT\ny = \"$${[[[[\" # [[[[\n/* [[[[ */\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, _ := ParseHCL("f.hcl", data)
		Check(docs)
	})
}
