package rollout

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// ANSI styles used when colour is on (pkg/plan's).
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

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

// WriteText prints a rollout plan like pkg/plan's WriteText: blocking
// issues first and loudly, then warnings, then the update with its version
// changes, order and approval, then each step with its nodes, the etcd
// snapshot taken before it and what it disrupts, then a summary line. ANSI
// colour is used only when color is true.
func WriteText(w io.Writer, rp *RolloutPlan, color bool) error {
	p := &printer{w: w, color: color}
	p.issues(rp.Blocking, true)
	p.issues(rp.Warnings, false)
	p.header(rp)
	for i, s := range rp.Steps {
		p.step(i, len(rp.Steps), s)
	}
	p.line("")
	p.summary(rp)
	if p.err != nil {
		return fmt.Errorf("write rollout plan: %w", p.err)
	}
	return nil
}

func (p *printer) issues(list []plan.Issue, blocking bool) {
	if len(list) == 0 {
		return
	}
	mark, color := "!", ansiYellow
	if blocking {
		mark, color = "✗", ansiRed
		p.line("%s", p.style(ansiBold+ansiRed, fmt.Sprintf("✗ BLOCKED: %s must be fixed before this rollout can start", plural(len(list), "blocking issue"))))
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

func (p *printer) header(rp *RolloutPlan) {
	p.line("%s", p.style(ansiBold, fmt.Sprintf("%s update %q: release %s (update kind %s) on %s",
		p.style(ansiYellow, "~"), rp.Name, rp.Version, rp.UpdateKind, plural(len(nodesOf(rp)), "node"))))
	per := plural(rp.BatchSize, "worker") + " per step, control planes one at a time"
	p.line("    strategy %s · %s · max unavailable %d · activation %s · drain_vms %t", rp.Strategy, per, rp.MaxUnavailable, rp.Activation, rp.DrainVMs)
	var vs []string
	if k := rp.Kubernetes; k != nil {
		vs = append(vs, "kubernetes "+change(k))
	}
	if e := rp.Etcd; e != nil {
		vs = append(vs, "etcd "+change(e))
	}
	if len(vs) > 0 {
		p.line("    versions: %s", strings.Join(vs, " · "))
	}
	p.line("    order: %s", rp.OrderReason)
	switch {
	case rp.Approval == api.ApprovalAuto:
		p.line("    approval: auto: starts at once")
	case rp.WaitsForApproval:
		p.line("    approval: manual: %s", p.style(ansiCyan, fmt.Sprintf("waits for approval (kctl update approve %s, or approve = true)", rp.Name)))
	default:
		p.line("    approval: manual, approved in the manifest (approve = true): starts at once")
	}
}

func change(v *VersionChange) string {
	from := strings.Join(v.From, ", ")
	if from == "" {
		from = "unknown"
	}
	to := v.To
	if strings.Count(to, ".") == 1 {
		to += ".x"
	}
	return from + " → " + to
}

func (p *printer) step(i, n int, s Step) {
	p.line("")
	p.line("    %s", p.style(ansiBold, fmt.Sprintf("step %d of %d · %s · %s", i+1, n, s.Phase, scopeText(s.Scope))))
	for _, c := range s.SnapshotBefore {
		p.line("      %s etcd snapshot of %s first, kept on the controller", p.style(ansiCyan, "●"), c)
	}
	kw := 0
	for _, d := range s.Disruptions {
		kw = max(kw, len(d.Kind))
	}
	for _, n := range s.Nodes {
		where := n.Role
		if len(n.Clusters) > 0 {
			where += " of " + strings.Join(n.Clusters, ", ")
		}
		p.line("      %s (%s)", p.style(ansiBold, n.ID), where)
		for _, d := range s.Disruptions {
			if d.Node != n.ID {
				continue
			}
			text := d.Detail
			if len(d.Units) > 0 {
				text = strings.Join(d.Units, ", ") + ": " + text
			}
			p.line("        %s %s  %s", p.style(ansiYellow, "~"), fmt.Sprintf("%-*s", kw, d.Kind), text)
		}
	}
}

func scopeText(scope string) string {
	switch scope {
	case ScopeControlPlane:
		return "control-plane components (kubelet held back)"
	case ScopeKubelet:
		return "kubelet only"
	}
	return "whole node"
}

func (p *printer) summary(rp *RolloutPlan) {
	roles := map[string]int{}
	seen := map[string]bool{}
	for _, s := range rp.Steps {
		for _, n := range s.Nodes {
			if !seen[n.ID] {
				seen[n.ID] = true
				roles[n.Role]++
			}
		}
	}
	var parts []string
	for _, r := range []struct{ role, word string }{{api.RoleWorker, "worker"}, {api.RoleControlPlane, "control plane"}, {RoleStandalone, "standalone node"}} {
		if roles[r.role] > 0 {
			parts = append(parts, plural(roles[r.role], r.word))
		}
	}
	head := fmt.Sprintf("Rollout: %s over %s", plural(len(rp.Steps), "step"), plural(len(nodesOf(rp)), "node"))
	if len(parts) > 0 {
		head += " (" + strings.Join(parts, ", ") + ")"
	}
	if rp.WaitsForApproval {
		head += ". Waits for approval."
	} else {
		head += ". Starts at once."
	}
	if n := len(rp.Warnings); n > 0 {
		head += " " + plural(n, "warning") + "."
	}
	p.line("%s", p.style(ansiBold, head))
	if n := len(rp.Blocking); n > 0 {
		p.line("%s", p.style(ansiBold+ansiRed, fmt.Sprintf("Blocked by %s: nothing will roll.", plural(n, "issue"))))
	}
}

// nodesOf lists the distinct node ids of a plan's steps in order.
func nodesOf(rp *RolloutPlan) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range rp.Steps {
		for _, n := range s.Nodes {
			if !seen[n.ID] {
				seen[n.ID] = true
				out = append(out, n.ID)
			}
		}
	}
	return out
}

// plural renders "1 step", "2 steps".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
