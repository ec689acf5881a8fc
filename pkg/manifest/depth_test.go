package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deep is how deeply the hostile inputs nest: far past any parser's stack.
const deep = 1_000_000

const resourceHead = "resource \"kcore_kubernetes_cluster\" \"c\" {\n  x = "

// hostile are inputs nested a million deep, each with the position the
// depth error must name.
func hostile() []struct {
	name, file, src, at string
} {
	r := strings.Repeat
	return []struct{ name, file, src, at string }{
		{"yaml flow sequences", "f.yaml", r("[", deep), "f.yaml:1: "},
		{"yaml flow mappings", "f.yaml", r("{", deep), "f.yaml:1: "},
		{"yaml keys in sequences", "f.yaml", r("a: [", deep), "f.yaml:1: "},
		{"yaml after a document", "f.yaml", "kind: ClusterUpdate\n---\nspec:\n  x: " + r("[", deep), "f.yaml:4: "},
		{"yaml sequence indicators", "f.yaml", "spec:\n  " + r("- ", deep) + "x\n", "f.yaml:2: "},
		{"yaml multi-line flow", "f.yaml", "spec: " + r("[\n", deep), "f.yaml:64: "},
		{"hcl tuples", "f.hcl", resourceHead + r("[", deep), "f.hcl:2:"},
		{"hcl objects", "f.hcl", resourceHead + r("{a=", deep), "f.hcl:2:"},
		{"hcl parentheses", "f.hcl", resourceHead + r("(", deep), "f.hcl:2:"},
		{"hcl blocks", "f.hcl", r("a {\n", deep), "f.hcl:"},
		{"hcl negations", "f.hcl", resourceHead + r("!", deep) + "true\n}\n", "f.hcl:2:"},
		{"hcl sums", "f.hcl", resourceHead + "1" + r("+1", deep) + "\n}\n", "f.hcl:2:"},
		{"hcl conditionals", "f.hcl", resourceHead + r("true ? 1 : ", deep) + "1\n}\n", "f.hcl:2:"},
		{"hcl indexes", "f.hcl", resourceHead + "[1]" + r("[(0)]", deep) + "\n}\n", "f.hcl:2:"},
		{"hcl templates", "f.hcl", resourceHead + r(`"${`, deep), "f.hcl:2:"},
		{"hcl template directives", "f.hcl", resourceHead + `"` + r("%{ if true }", deep), "f.hcl:2:"},
		{"hcl heredocs", "f.hcl", resourceHead + r("<<EOT\n${", deep), "f.hcl:"},
		{"hcl sums over lines in brackets", "f.hcl", resourceHead + "[1" + r("\n+1", deep) + "]\n}\n", "f.hcl:"},
		{"hcl sums over lines", "f.hcl", resourceHead + "1" + r(" +\n1", deep) + "\n}\n", "f.hcl:"},
	}
}

// TestDeepInputRefused: a million-deep input is refused with one error
// naming the file, the line (and for HCL the column) and the limit, before
// any parser sees it — with a few allocations, whatever the input's size.
func TestDeepInputRefused(t *testing.T) {
	for _, tt := range hostile() {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.src)
			var ds Diagnostics
			allocs := testing.AllocsPerRun(1, func() { _, ds = Parse(tt.file, data) })
			if len(ds) != 1 {
				t.Fatalf("got %d diagnostics, want 1:\n%.500v", len(ds), ds)
			}
			got := ds[0].String()
			want := fmt.Sprintf("nested deeper than the limit of %d levels (manifest.MaxDepth)", MaxDepth)
			if !strings.HasPrefix(got, tt.at) || !strings.Contains(got, want) {
				t.Fatalf("got %q, want %q… containing %q", got, tt.at, want)
			}
			if allocs > 32 {
				t.Fatalf("%v allocations, want the pre-scan to refuse with a few", allocs)
			}
		})
	}
}

// TestDepthAtTheBound: MaxDepth levels are read, one more is refused.
func TestDepthAtTheBound(t *testing.T) {
	r := strings.Repeat
	tests := []struct {
		name string
		src  func(n int) string
		file string
	}{
		// The line itself is one indentation level.
		{"yaml indicators", func(n int) string { return r("- ", n-1) + "x\n" }, "f.yaml"},
		{"yaml flow", func(n int) string { return r("[", n-1) + r("]", n-1) + "\n" }, "f.yaml"},
		{"yaml indentation", func(n int) string {
			var b strings.Builder
			for i := range n {
				b.WriteString(r(" ", i) + "a:\n")
			}
			return b.String()
		}, "f.yaml"},
		// Each ! is one term.
		{"hcl terms", func(n int) string { return r("!", n) }, "f.hcl"},
		// Each ( is a term of the level outside it and a level itself.
		{"hcl levels", func(n int) string { return r("(", n/2) + r(")", n/2) }, "f.hcl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			depthErr := func(src string) bool {
				_, ds := Parse(tt.file, []byte(src))
				for _, d := range ds {
					if strings.Contains(d.Message, "manifest.MaxDepth") {
						return true
					}
				}
				return false
			}
			if depthErr(tt.src(MaxDepth)) {
				t.Fatalf("%d levels refused", MaxDepth)
			}
			over := MaxDepth + 1
			if tt.name == "hcl levels" {
				over = MaxDepth + 2
			}
			if !depthErr(tt.src(over)) {
				t.Fatalf("%d levels read", over)
			}
		})
	}
}

// TestDepthSkipsStringsAndComments: brackets in strings, comments, block
// scalars and heredocs are text, however many there are.
func TestDepthSkipsStringsAndComments(t *testing.T) {
	many := strings.Repeat("[{(", 1000)
	tests := []struct{ file, src string }{
		{"f.yaml", "a: \"" + many + "\"\n"},
		{"f.yaml", "a: '" + many + "''" + many + "'\n"},
		{"f.yaml", "a: \"x\\\"" + many + "\"\n"},
		{"f.yaml", "a: \"multi\n  " + many + "\n  line\"\n"},
		{"f.yaml", "# " + many + "\na: 1 # " + many + "\n"},
		{"f.yaml", "a: |\n  " + many + "\n  " + many + "\nb: >-\n  " + many + "\n"},
		{"f.yaml", "a: b" + many + "\n"},
		{"f.yaml", "- &anchor !tag \"" + many + "\"\n"},
		{"f.hcl", "x = \"" + many + "\"\n"},
		{"f.hcl", "x = \"\\\"" + many + "$${" + many + "\"\n"},
		{"f.hcl", "x = \"${\"" + many + "\"}\"\n"},
		{"f.hcl", "# " + many + "\n// " + many + "\n/* " + many + "\n" + many + " */\n"},
		{"f.hcl", "x = <<EOT\n" + many + "\n" + many + "\n  EOT\ny = <<-EOT\n  " + many + "\n  EOT\n"},
		{"f.hcl", "x = [\n" + strings.Repeat("  1,\n", 1000) + "]\n"},
		{"f.hcl", strings.Repeat("a = 1\n", 1000) + strings.Repeat("b = -1 # n\n", 1000)},
	}
	for _, tt := range tests {
		_, ds := Parse(tt.file, []byte(tt.src))
		for _, d := range ds {
			if strings.Contains(d.Message, "manifest.MaxDepth") {
				t.Errorf("%s %.60q…: %s", tt.file, tt.src, d)
			}
		}
	}
}

// TestExamplesFarBelowDepth: every example and test manifest is read with
// room to spare: the limit is not close to refusing real input.
func TestExamplesFarBelowDepth(t *testing.T) {
	n := 0
	for _, root := range []string{"../../examples", "testdata"} {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !isManifestName(p) {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			if strings.HasSuffix(p, ".hcl") {
				s := hclScan{data: data, stack: []hclLevel{{kind: '{'}}}
				peak := 0
				for s.i < len(s.data) {
					switch s.top().kind {
					case '"':
						s.stringStep()
					case '<':
						s.heredocStep()
					default:
						s.codeStep()
					}
					peak = max(peak, s.cost)
				}
				if peak > MaxDepth/2 {
					t.Errorf("%s nests %d deep", p, peak)
				}
				return nil
			}
			s := yamlScan{block: -1}
			for i, line := range strings.Split(string(data), "\n") {
				s.line([]byte(line))
				if d := s.depth(0); d > MaxDepth/4 {
					t.Errorf("%s:%d nests %d deep", p, i+1, d)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 5 {
		t.Fatalf("read %d manifests, want the examples and testdata", n)
	}
}

// TestDepthScanFollowsTheLexer: where the HCL lexer's rules are subtle, the
// pre-scan reads code as code and text as text exactly as the lexer does,
// so no deep code hides behind what the scan took for a heredoc or string.
func TestDepthScanFollowsTheLexer(t *testing.T) {
	deepTail := "y = " + strings.Repeat("!", deep) + "true\n"
	tests := []struct{ name, src, want string }{
		// The lexer closes the heredoc after the broken byte; code follows.
		{"broken byte before a marker", "x = <<EOT\n\xffEOT\n" + deepTail, "f.hcl:3:67: nested deeper than the limit"},
		// How bytes over 0x7f join the code around them is the lexer's
		// Unicode tables' call (they take "\xd5\"" for a name): the scan
		// refuses them outside text rather than guess.
		{"non-ASCII heredoc marker", "x = <<EOTé\n\"\nEOTé\n" + deepTail + "\"\n", "f.hcl:1:10: non-ASCII character outside a string"},
		{"quote after a high byte", "x = \xd5\"[\n" + deepTail + "\"\n", "f.hcl:1:5: non-ASCII character outside a string"},
		{"escaped interpolation", "x = \"$${\"\n" + deepTail, "f.hcl:2:67: nested deeper than the limit"},
		{"unterminated block comment", "x = 1 /* \n" + deepTail, "f.hcl:2:62: nested deeper than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ds := Parse("f.hcl", []byte(tt.src))
			if len(ds) != 1 || !strings.HasPrefix(ds[0].String(), tt.want) {
				t.Fatalf("got %.300v, want one %q…", ds, tt.want)
			}
		})
	}
}
