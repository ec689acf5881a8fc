package plan

import (
	"fmt"
	"io"
	"strings"
)

// ANSI styles used when colour is on.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

// printer writes a plan as text and keeps the first write error.
type printer struct {
	w     io.Writer
	color bool
	err   error
}

func (p *printer) style(codes, s string) string {
	if !p.color || s == "" {
		return s
	}
	return codes + s + ansiReset
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// WriteText prints p Terraform-style: blocking issues first and loudly, then
// warnings, then each cluster's action with its field diff and its steps
// grouped by node with their disruption and the projected etcd quorum, then a
// summary line. ANSI colour is used only when color is true.
func WriteText(w io.Writer, p *Plan, color bool) error {
	pr := &printer{w: w, color: color}
	pr.issues(p.Blocking, true)
	pr.issues(p.Warnings, false)
	for _, c := range p.Clusters {
		pr.cluster(c, blocks(p, c.Name))
	}
	pr.summary(p)
	if pr.err != nil {
		return fmt.Errorf("write plan: %w", pr.err)
	}
	return nil
}

func (p *printer) issues(list []Issue, blocking bool) {
	if len(list) == 0 {
		return
	}
	mark, color := "!", ansiYellow
	if blocking {
		mark, color = "✗", ansiRed
		p.line("%s", p.style(ansiBold+ansiRed, fmt.Sprintf("✗ BLOCKED: %s must be fixed before this plan can be applied", plural(len(list), "blocking issue"))))
	} else {
		p.line("%s", p.style(ansiBold+ansiYellow, "! "+plural(len(list), "warning")))
	}
	p.line("")
	for _, i := range list {
		p.line("  %s %s", p.style(color, mark), p.style(ansiBold, i.Code))
		var where []string
		for _, f := range [][2]string{{"cluster", i.Cluster}, {"path", i.Path}, {"node", i.Node}} {
			if f[1] != "" {
				where = append(where, f[0]+" "+f[1])
			}
		}
		if len(where) > 0 {
			p.line("      %s", p.style(ansiDim, strings.Join(where, " · ")))
		}
		p.line("      %s", i.Message)
		if i.Fix != "" {
			p.line("      %s %s", p.style(ansiBold, "fix:"), i.Fix)
		}
		p.line("")
	}
}

// blocks reports whether a blocking issue names the cluster.
func blocks(p *Plan, name string) bool {
	for _, i := range p.Blocking {
		if i.Cluster == name {
			return true
		}
	}
	return false
}

func (p *printer) cluster(c ClusterPlan, blocked bool) {
	var head string
	switch c.Action {
	case ActionCreate:
		head = p.style(ansiGreen, "+ create") + " cluster " + quote(c.Name)
	case ActionUpdate:
		head = p.style(ansiYellow, "~ update") + " cluster " + quote(c.Name) + " in place"
	case ActionReplace:
		head = p.style(ansiCyan, "-/+ replace") + " cluster " + quote(c.Name) + ": torn down and created again; its etcd data is lost"
	case ActionDelete:
		head = p.style(ansiRed, "- delete") + " cluster " + quote(c.Name)
	default:
		head = "  no changes to cluster " + quote(c.Name)
	}
	p.line("%s", p.style(ansiBold, head))
	if c.Action == ActionCreate && c.Desired != nil {
		p.summaryOfSpec(c)
	}
	for _, d := range c.Diff {
		switch {
		case d.Old == "":
			p.line("    %s %s: %s", p.style(ansiGreen, "+"), d.Path, quote(d.New))
		case d.New == "":
			p.line("    %s %s: %s", p.style(ansiRed, "-"), d.Path, quote(d.Old))
		default:
			p.line("    %s %s: %s → %s", p.style(ansiYellow, "~"), d.Path, quote(d.Old), quote(d.New))
		}
	}
	switch {
	case c.Action == ActionNoOp || len(c.Steps) > 0:
	case blocked:
		p.line("    (no steps: the changes above are blocked)")
	default:
		p.line("    (stored only: nothing restarts)")
	}
	p.steps(c.Steps)
	p.line("")
}

func (p *printer) summaryOfSpec(c ClusterPlan) {
	s := c.Desired.Spec
	p.line("    control planes: %s (bootstrap %s)", listOrNone(memberIDs(s.ControlPlaneNodes)), firstCP(c.Desired))
	p.line("    workers: %s", listOrNone(memberIDs(s.WorkerNodes)))
	ep := "https://" + s.APIServerEndpoint
	if s.HighAvailability.Enabled {
		ep += fmt.Sprintf(" (VIP %s on %s)", s.HighAvailability.VIPAddress, s.HighAvailability.VIPInterface)
	}
	p.line("    API: %s", ep)
	p.line("    cni: %s · pods %s · services %s · dns %s", s.CNI, s.ClusterCIDR, s.ServiceCIDR, s.ClusterDNS)
}

func (p *printer) steps(steps []Step) {
	cw, aw, dw := 0, 0, 0
	for _, s := range steps {
		cw, aw, dw = max(cw, len(s.Component)), max(aw, len(s.Action)), max(dw, len(disruptionTag(s)))
	}
	node, quorum := "", ""
	for i, s := range steps {
		if i == 0 || s.Node != node {
			node = s.Node
			p.line("")
			p.line("    %s", p.style(ansiBold, "on "+node+":"))
		}
		sym, col := stepSymbol(s.Action)
		tag := disruptionTag(s)
		text := fmt.Sprintf("%-*s  %-*s  %s%s", cw, s.Component, aw, s.Action, p.style(ansiYellow, tag), strings.Repeat(" ", dw-len(tag)))
		if s.Detail != "" {
			text += "  " + s.Detail
		}
		p.line("      %s %s", p.style(col, sym), strings.TrimRight(text, " "))
		if s.QuorumAfter != quorum && s.QuorumAfter != "no etcd members" {
			p.line("          %s", p.style(ansiDim, "⇒ etcd: "+s.QuorumAfter))
		}
		quorum = s.QuorumAfter
	}
}

// disruptionTag is "[vip-move]", or "" for none.
func disruptionTag(s Step) string {
	if s.Disruption == DisruptionNone || s.Disruption == "" {
		return ""
	}
	return "[" + s.Disruption + "]"
}

// stepSymbol maps a step action to its +/~/-/= mark and colour.
func stepSymbol(action string) (string, string) {
	switch action {
	case StepCreate, StepStart, StepIssue, StepInstall, StepAddMember:
		return "+", ansiGreen
	case StepStop, StepRemove, StepRemoveMember:
		return "-", ansiRed
	case StepKeep:
		return "=", ansiDim
	}
	return "~", ansiYellow
}

func (p *printer) summary(pl *Plan) {
	warn := ""
	if n := len(pl.Warnings); n > 0 {
		warn = " " + plural(n, "warning") + "."
	}
	if !pl.Changes() {
		p.line("%s%s", p.style(ansiBold, "No changes. The stored clusters match the manifests."), warn)
	} else {
		c := pl.Counts()
		replace := ""
		if c[ActionReplace] > 0 {
			replace = fmt.Sprintf(" %d to replace,", c[ActionReplace])
		}
		p.line("%s%s", p.style(ansiBold, fmt.Sprintf("Plan: %d to create, %d to update,%s %d to delete.", c[ActionCreate], c[ActionUpdate], replace, c[ActionDelete])), warn)
	}
	if n := len(pl.Blocking); n > 0 {
		p.line("%s", p.style(ansiBold+ansiRed, fmt.Sprintf("Blocked by %s: nothing will be applied.", plural(n, "issue"))))
	}
}

func quote(s string) string { return `"` + s + `"` }
