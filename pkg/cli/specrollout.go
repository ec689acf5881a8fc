package cli

import (
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// specStepLine says which step of kc's spec rollout runs, or is next, and
// what it waits for: "" when none does.
func specStepLine(kc *api.KubernetesCluster) string {
	ro := kc.Status.SpecRollout
	if ro == nil {
		return ""
	}
	for i, s := range ro.Steps {
		if s.State == "done" {
			continue
		}
		line := fmt.Sprintf("spec generation %d: step %d of %d (%s %s) %s", ro.Generation, i+1, len(ro.Steps), s.Scope, strings.Join(s.Nodes, ", "), s.State)
		switch {
		case s.Message != "":
			line += ": " + s.Message
		case ro.Message != "":
			line += ": " + ro.Message
		}
		return line
	}
	return ""
}

// specRolloutLines are the lines of `kctl kubernetes get` about the spec
// rollout: every step, its state and what it waits for.
func specRolloutLines(kc *api.KubernetesCluster) []string {
	ro := kc.Status.SpecRollout
	if ro == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("Spec rollout:    generation %d %s", ro.Generation, ro.Phase)}
	if ro.Message != "" {
		lines[0] += ": " + ro.Message
	}
	for i, s := range ro.Steps {
		line := fmt.Sprintf("  step %d %-13s %-30s %s", i+1, s.Scope, strings.Join(s.Nodes, ", "), s.State)
		if s.Message != "" {
			line += ": " + s.Message
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// specRolloutChecks are the health rows of the spec rollout's steps that
// are not done.
func specRolloutChecks(kc *api.KubernetesCluster) []healthCheck {
	ro := kc.Status.SpecRollout
	if ro == nil || ro.Phase == api.SpecRolloutDone {
		return nil
	}
	var out []healthCheck
	for i, s := range ro.Steps {
		if s.State == "done" {
			continue
		}
		msg := s.Message
		if msg == "" && s.State == "failed" {
			msg = ro.Message
		}
		out = append(out, healthCheck{Node: strings.Join(s.Nodes, ","), Component: "spec rollout",
			Check: fmt.Sprintf("generation %d step %d/%d %s", ro.Generation, i+1, len(ro.Steps), s.Scope),
			State: orUnknown(s.State), Last: s.StartedAt, Message: msg})
	}
	return out
}
