package plan

import (
	"fmt"
	"io"
	"strings"
)

// ANSI styles TextPrinter applies when colour is on.
const (
	StyleReset  = "\x1b[0m"
	StyleBold   = "\x1b[1m"
	StyleDim    = "\x1b[2m"
	StyleRed    = "\x1b[31m"
	StyleGreen  = "\x1b[32m"
	StyleYellow = "\x1b[33m"
	StyleCyan   = "\x1b[36m"
)

// TextPrinter writes plan-style text (the cluster plan here, rollouts in
// pkg/rollout): ANSI styles only when Color is on, and the first write error
// kept in Err so callers check once at the end.
type TextPrinter struct {
	W     io.Writer
	Color bool
	Err   error
}

// Style wraps s in the ANSI codes when colour is on.
func (p *TextPrinter) Style(codes, s string) string {
	if !p.Color || s == "" {
		return s
	}
	return codes + s + StyleReset
}

// Line writes one formatted line.
func (p *TextPrinter) Line(format string, args ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format+"\n", args...)
	}
}

// Issues prints blocking issues (loudly, saying they must be fixed before
// what, e.g. "this plan can be applied") or warnings, each with its code,
// where it is, its message and its fix.
func (p *TextPrinter) Issues(list []Issue, blocking bool, before string) {
	if len(list) == 0 {
		return
	}
	mark, color := "!", StyleYellow
	if blocking {
		mark, color = "✗", StyleRed
		p.Line("%s", p.Style(StyleBold+StyleRed, fmt.Sprintf("✗ BLOCKED: %s must be fixed before %s", plural(len(list), "blocking issue"), before)))
	} else {
		p.Line("%s", p.Style(StyleBold+StyleYellow, "! "+plural(len(list), "warning")))
	}
	p.Line("")
	for _, i := range list {
		p.Line("  %s %s", p.Style(color, mark), p.Style(StyleBold, i.Code))
		var where []string
		for _, f := range [][2]string{{"cluster", i.Cluster}, {"path", i.Path}, {"node", i.Node}} {
			if f[1] != "" {
				where = append(where, f[0]+" "+f[1])
			}
		}
		if len(where) > 0 {
			p.Line("      %s", p.Style(StyleDim, strings.Join(where, " · ")))
		}
		p.Line("      %s", i.Message)
		if i.Fix != "" {
			p.Line("      %s %s", p.Style(StyleBold, "fix:"), i.Fix)
		}
		p.Line("")
	}
}
