package manifest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// scanLevels is the deepest nesting the HCL pre-scan sees in data (open
// levels, not terms).
func scanLevels(data []byte) int {
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
		if s.msg != "" {
			return -1
		}
		peak = max(peak, len(s.stack)-1)
	}
	return peak
}

// lexerLevels is the deepest nesting of the hclsyntax lexer's tokens for
// data, closing levels by the same rules as the pre-scan.
func lexerLevels(data []byte) int {
	toks, _ := hclsyntax.LexConfig(data, "f.hcl", hcl.InitialPos)
	stack := []byte{'{'}
	peak := 0
	popThrough := func(kinds string) {
		for j := len(stack) - 1; j > 0; j-- {
			if strings.IndexByte(kinds, stack[j]) >= 0 {
				stack = stack[:j]
				return
			}
		}
	}
	popIf := func(k byte) {
		if stack[len(stack)-1] == k {
			stack = stack[:len(stack)-1]
		}
	}
	for _, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOBrace:
			stack = append(stack, '{')
		case hclsyntax.TokenOBrack:
			stack = append(stack, '[')
		case hclsyntax.TokenOParen:
			stack = append(stack, '(')
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			stack = append(stack, '$')
		case hclsyntax.TokenOQuote:
			stack = append(stack, '"')
		case hclsyntax.TokenOHeredoc:
			stack = append(stack, '<')
		case hclsyntax.TokenCBrace, hclsyntax.TokenTemplateSeqEnd:
			popThrough("{$")
		case hclsyntax.TokenCBrack:
			popIf('[')
		case hclsyntax.TokenCParen:
			popIf('(')
		case hclsyntax.TokenCQuote:
			popIf('"')
		case hclsyntax.TokenCHeredoc:
			popIf('<')
		}
		peak = max(peak, len(stack)-1)
	}
	return peak
}

// TestDepthScanEnds: a template character at the very end of a string or
// heredoc ends the scan (it once looped there forever).
func TestDepthScanEnds(t *testing.T) {
	for _, src := range []string{`x = "$`, `x = "%`, "x = <<EOT\n$", "x = <<EOT\n%", `x = "${"$`} {
		if off, msg := hclDepth([]byte(src)); off >= 0 {
			t.Errorf("%q refused at %d: %s", src, off, msg)
		}
	}
}

// hclFragments are the pieces where lexing is subtle.
var hclFragments = []string{
	"[", "]", "(", ")", "{", "}", "~}", "\"", "${", "%{", "$${", "%%{", "$", "%",
	"\\", "\\\"", "#", "//", "/*", "*/", "\n", "\r\n", " ", "a", "1", "1e5", "-",
	"<<EOT\n", "<<-EOT\n", "EOT\n", "  EOT\n", "EOT", "\xff", "\xc3\xa9", "é", "x = ",
}

// TestDepthScanMatchesLexer: on random mixes of the pieces where lexing is
// subtle, the pre-scan sees the same nesting as the hclsyntax lexer, so no
// level can hide from it.
func TestDepthScanMatchesLexer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(hclFragments[rng.IntN(len(hclFragments))])
		}
		data := []byte(b.String())
		got := scanLevels(data)
		if got < 0 {
			continue // refused (a non-ASCII heredoc marker)
		}
		if want := lexerLevels(data); got != want {
			t.Fatalf("%q: pre-scan sees %d levels, the lexer %d", data, got, want)
		}
	}
}

// FuzzHCLDepthScan: the pre-scan never sees fewer levels than the lexer.
func FuzzHCLDepthScan(f *testing.F) {
	for _, s := range hclFragments {
		f.Add([]byte(s + s + s))
	}
	f.Add([]byte("x = <<EOT\n\xffEOT\ny = [[[\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got := scanLevels(data); got >= 0 && got < lexerLevels(data) {
			t.Fatalf("%q: pre-scan sees %d levels, the lexer %d", data, got, lexerLevels(data))
		}
	})
}
