package plan

import (
	"fmt"
	"io"
	"strings"
)

// printer writes a plan as text.
type printer struct{ TextPrinter }

// WriteText prints p Terraform-style: blocking issues first and loudly, then
// warnings, then each cluster's action with its field diff and its steps
// grouped by node with their disruption and the projected etcd quorum, then a
// summary line. ANSI colour is used only when color is true.
func WriteText(w io.Writer, p *Plan, color bool) error {
	pr := &printer{TextPrinter{W: w, Color: color}}
	pr.Issues(p.Blocking, true, "this plan can be applied")
	pr.Issues(p.Warnings, false, "")
	for _, c := range p.Clusters {
		pr.cluster(c, blocks(p, c.Name))
	}
	pr.summary(p)
	if pr.Err != nil {
		return fmt.Errorf("write plan: %w", pr.Err)
	}
	return nil
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
		head = p.Style(StyleGreen, "+ create") + " cluster " + quote(c.Name)
	case ActionUpdate:
		head = p.Style(StyleYellow, "~ update") + " cluster " + quote(c.Name) + " in place"
	case ActionReplace:
		head = p.Style(StyleCyan, "-/+ replace") + " cluster " + quote(c.Name) + ": torn down and created again; its etcd data is lost"
	case ActionDelete:
		head = p.Style(StyleRed, "- delete") + " cluster " + quote(c.Name)
	default:
		head = "  no changes to cluster " + quote(c.Name)
	}
	p.Line("%s", p.Style(StyleBold, head))
	if c.Action == ActionCreate && c.Desired != nil {
		p.summaryOfSpec(c)
	}
	for _, d := range c.Diff {
		switch {
		case d.Old == "":
			p.Line("    %s %s: %s", p.Style(StyleGreen, "+"), d.Path, quote(d.New))
		case d.New == "":
			p.Line("    %s %s: %s", p.Style(StyleRed, "-"), d.Path, quote(d.Old))
		default:
			p.Line("    %s %s: %s → %s", p.Style(StyleYellow, "~"), d.Path, quote(d.Old), quote(d.New))
		}
	}
	switch {
	case c.Action == ActionNoOp || len(c.Steps) > 0:
	case blocked:
		p.Line("    (no steps: the changes above are blocked)")
	default:
		p.Line("    (stored only: nothing restarts)")
	}
	p.steps(c.Steps)
	p.Line("")
}

func (p *printer) summaryOfSpec(c ClusterPlan) {
	s := c.Desired.Spec
	p.Line("    control planes: %s (bootstrap %s)", listOrNone(memberIDs(s.ControlPlaneNodes)), firstCP(c.Desired))
	p.Line("    workers: %s", listOrNone(memberIDs(s.WorkerNodes)))
	ep := "https://" + s.APIServerEndpoint
	if s.HighAvailability.Enabled {
		ep += fmt.Sprintf(" (VIP %s on %s)", s.HighAvailability.VIPAddress, s.HighAvailability.VIPInterface)
	}
	p.Line("    API: %s", ep)
	p.Line("    cni: %s · pods %s · services %s · dns %s", s.CNI, s.ClusterCIDR, s.ServiceCIDR, s.ClusterDNS)
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
			p.Line("")
			p.Line("    %s", p.Style(StyleBold, "on "+node+":"))
		}
		sym, col := stepSymbol(s.Action)
		tag := disruptionTag(s)
		text := fmt.Sprintf("%-*s  %-*s  %s%s", cw, s.Component, aw, s.Action, p.Style(StyleYellow, tag), strings.Repeat(" ", dw-len(tag)))
		if s.Detail != "" {
			text += "  " + s.Detail
		}
		p.Line("      %s %s", p.Style(col, sym), strings.TrimRight(text, " "))
		for _, it := range s.Changes {
			p.item(it)
		}
		if s.QuorumAfter != quorum && s.QuorumAfter != "no etcd members" {
			p.Line("          %s", p.Style(StyleDim, "⇒ etcd: "+s.QuorumAfter))
		}
		quorum = s.QuorumAfter
	}
}

// item prints one rendered change under its step: its mark, the change
// (for a file add/change/remove; for a unit, task or volume the verb),
// what it is and, for a restart, which inputs changed. Content is never
// printed, secret or not.
func (p *printer) item(it ItemChange) {
	sym, col := itemSymbol(it.Change)
	text := it.Kind + " " + it.Name
	if it.Kind != KindFile {
		text = it.Change + " " + text
	}
	if it.Reason != "" {
		text += ": " + it.Reason
	}
	switch {
	case it.Change == ChangeUpdate && it.Kind == KindUnit:
		text += " (changed: " + strings.Join(it.Because, ", ") + "; not in its input hash, no restart)"
	case len(it.Because) > 0:
		text += " (changed: " + strings.Join(it.Because, ", ") + ")"
	}
	if len(it.Objects) > 0 {
		text += " [" + strings.Join(it.Objects, "; ") + "]"
	}
	p.Line("          %s %s", p.Style(col, sym), text)
}

// itemSymbol maps an item change to its +/~/-/= mark and colour.
func itemSymbol(change string) (string, string) {
	switch change {
	case ChangeAdd, ChangeStart, ChangeCreate:
		return "+", StyleGreen
	case ChangeRemove, ChangeStop, ChangePurge:
		return "-", StyleRed
	case ChangeKeep:
		return "=", StyleDim
	}
	return "~", StyleYellow
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
	case StepCreate, StepStart, StepIssue, StepAddMember:
		return "+", StyleGreen
	case StepStop, StepRemove, StepRemoveMember:
		return "-", StyleRed
	case StepKeep:
		return "=", StyleDim
	}
	return "~", StyleYellow
}

func (p *printer) summary(pl *Plan) {
	warn := ""
	if n := len(pl.Warnings); n > 0 {
		warn = " " + plural(n, "warning") + "."
	}
	if !pl.Changes() {
		p.Line("%s%s", p.Style(StyleBold, "No changes. The stored clusters match the manifests."), warn)
	} else {
		c := pl.Counts()
		replace := ""
		if c[ActionReplace] > 0 {
			replace = fmt.Sprintf(" %d to replace,", c[ActionReplace])
		}
		p.Line("%s%s", p.Style(StyleBold, fmt.Sprintf("Plan: %d to create, %d to update,%s %d to delete.", c[ActionCreate], c[ActionUpdate], replace, c[ActionDelete])), warn)
	}
	if n := len(pl.Blocking); n > 0 {
		p.Line("%s", p.Style(StyleBold+StyleRed, fmt.Sprintf("Blocked by %s: nothing will be applied.", plural(n, "issue"))))
	}
}

func quote(s string) string { return `"` + s + `"` }
