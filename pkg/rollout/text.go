package rollout

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// printer writes a rollout plan as text, in pkg/plan's style.
type printer struct{ plan.TextPrinter }

// WriteText prints a rollout plan like pkg/plan's WriteText: blocking
// issues first and loudly, then warnings, then the update with its version
// changes, order and approval, then each step with its nodes, the etcd
// snapshot taken before it and what it disrupts, then a summary line. ANSI
// colour is used only when color is true.
func WriteText(w io.Writer, rp *RolloutPlan, color bool) error {
	p := &printer{plan.TextPrinter{W: w, Color: color}}
	p.Issues(rp.Blocking, true, "this rollout can start")
	p.Issues(rp.Warnings, false, "")
	p.header(rp)
	for i, s := range rp.Steps {
		p.step(i, len(rp.Steps), s)
	}
	p.Line("")
	p.summary(rp)
	if p.Err != nil {
		return fmt.Errorf("write rollout plan: %w", p.Err)
	}
	return nil
}

func (p *printer) header(rp *RolloutPlan) {
	p.Line("%s", p.Style(plan.StyleBold, fmt.Sprintf("%s update %q: release %s (update kind %s) on %s",
		p.Style(plan.StyleYellow, "~"), rp.Name, rp.Version, rp.UpdateKind, plural(len(nodesOf(rp)), "node"))))
	per := plural(rp.BatchSize, "worker") + " per step, control planes one at a time"
	p.Line("    strategy %s · %s · max unavailable %d · activation %s · drain_vms %t", rp.Strategy, per, rp.MaxUnavailable, rp.Activation, rp.DrainVMs)
	var vs []string
	if k := rp.Kubernetes; k != nil {
		vs = append(vs, "kubernetes "+change(k))
	}
	if e := rp.Etcd; e != nil {
		vs = append(vs, "etcd "+change(e))
	}
	if len(vs) > 0 {
		p.Line("    versions: %s", strings.Join(vs, " · "))
	}
	p.Line("    order: %s", rp.OrderReason)
	switch {
	case rp.Approval == api.ApprovalAuto:
		p.Line("    approval: auto: starts at once")
	case rp.WaitsForApproval:
		p.Line("    approval: manual: %s", p.Style(plan.StyleCyan, fmt.Sprintf("waits for approval (kctl update approve %s, or approve = true)", rp.Name)))
	default:
		p.Line("    approval: manual, approved in the manifest (approve = true): starts at once")
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
	p.Line("")
	p.Line("    %s", p.Style(plan.StyleBold, fmt.Sprintf("step %d of %d · %s · %s", i+1, n, s.Phase, scopeText(s.Scope))))
	for _, c := range s.SnapshotBefore {
		p.Line("      %s etcd snapshot of %s first, kept on the controller", p.Style(plan.StyleCyan, "●"), c)
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
		p.Line("      %s (%s)", p.Style(plan.StyleBold, n.ID), where)
		for _, d := range s.Disruptions {
			if d.Node != n.ID {
				continue
			}
			text := d.Detail
			if len(d.Units) > 0 {
				text = strings.Join(d.Units, ", ") + ": " + text
			}
			p.Line("        %s %s  %s", p.Style(plan.StyleYellow, "~"), fmt.Sprintf("%-*s", kw, d.Kind), text)
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
	p.Line("%s", p.Style(plan.StyleBold, head))
	if n := len(rp.Blocking); n > 0 {
		p.Line("%s", p.Style(plan.StyleBold+plan.StyleRed, fmt.Sprintf("Blocked by %s: nothing will roll.", plural(n, "issue"))))
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
