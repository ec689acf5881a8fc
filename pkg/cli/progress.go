package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

// waitPoll caps one blocking query of --wait.
const waitPoll = 30 * time.Second

// ErrDegraded is returned by --wait when a cluster ends degraded.
var ErrDegraded = errors.New("the cluster is degraded")

// waitForClusters follows every cluster an apply wrote, one after the other,
// within timeout.
func waitForClusters(cmd *cobra.Command, s Streams, c *client.Client, out apiv1.ApplyResponse, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(cmdContext(cmd), timeout)
	defer cancel()
	for _, name := range sortedKeys(out.Clusters) {
		p := &progress{w: s.Out, tty: isTTY(s.Out), name: name, nodes: map[string]string{}}
		if err := p.follow(ctx, c, out.Clusters[name] == api.PhaseDeleting, timeout); err != nil {
			return err
		}
	}
	return nil
}

// progress follows one cluster with blocking queries and prints its phase
// transitions and per-node readiness: plain lines, plus a status line
// redrawn in place on a terminal.
type progress struct {
	w     io.Writer
	tty   bool
	name  string
	phase string
	nodes map[string]string
	// step is the last spec rollout step line printed.
	step string
	// ca is the last CA rotation line printed.
	ca    string
	drawn bool
}

func (p *progress) follow(ctx context.Context, c *client.Client, deleting bool, timeout time.Duration) error {
	var index uint64
	for {
		wait := waitPoll
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, max(time.Until(dl), time.Millisecond))
		}
		o, idx, err := c.GetWith(ctx, api.KindKubernetesCluster, p.name, client.ReadOptions{Index: index, Wait: wait})
		switch {
		case ctx.Err() != nil:
			p.clear()
			return &ExitError{Code: 1, Err: fmt.Errorf("gave up waiting for cluster %q after %s: it is still %s", p.name, timeout, orUnknown(p.phase))}
		case deleting && errors.Is(err, client.ErrNotFound):
			return p.line("cluster %q: deleted", p.name)
		case err != nil:
			p.clear()
			return fmt.Errorf("follow cluster %s: %w", p.name, err)
		}
		var kc api.KubernetesCluster
		if err := json.Unmarshal(o.Data, &kc); err != nil {
			return fmt.Errorf("decode cluster %s: %w", p.name, err)
		}
		if err := p.show(&kc); err != nil {
			return err
		}
		switch kc.Status.Phase {
		case api.PhaseReady:
			if !deleting && kc.ReadyAt(time.Now()) {
				return p.line("cluster %q is ready", p.name)
			}
		case api.PhaseDegraded:
			if !deleting {
				for _, cond := range kc.Status.Conditions {
					if cond.Status != "True" {
						if err := p.line("  failing: %s: %s %s", cond.Type, cond.Reason, cond.Message); err != nil {
							return err
						}
					}
				}
				return &ExitError{Code: 1, Err: fmt.Errorf("cluster %q: %w", p.name, ErrDegraded)}
			}
		}
		index = idx
	}
}

// show prints what changed since the last answer.
func (p *progress) show(kc *api.KubernetesCluster) error {
	if ph := kc.Status.Phase; ph != p.phase {
		from := p.phase
		p.phase = ph
		msg := fmt.Sprintf("cluster %q: phase %s", p.name, orUnknown(ph))
		if from != "" {
			msg = fmt.Sprintf("cluster %q: phase %s → %s", p.name, from, orUnknown(ph))
		}
		if err := p.line("%s", msg); err != nil {
			return err
		}
	}
	if ca := caRotationLine(kc); ca != p.ca {
		p.ca = ca
		if ca != "" {
			if err := p.line("  %s", ca); err != nil {
				return err
			}
		}
	}
	if step := specStepLine(kc); step != p.step {
		p.step = step
		if step != "" {
			if err := p.line("  %s", step); err != nil {
				return err
			}
		}
	}
	cpReady, cpTotal, wReady, wTotal := 0, 0, 0, 0
	for _, n := range kc.Status.Nodes {
		state := "not ready"
		if n.Ready {
			state = "ready"
		}
		if n.Message != "" {
			state += ": " + n.Message
		}
		if n.Role == api.RoleControlPlane {
			cpTotal++
			cpReady += boolCount(n.Ready)
		} else {
			wTotal++
			wReady += boolCount(n.Ready)
		}
		if p.nodes[n.NodeID] != state {
			p.nodes[n.NodeID] = state
			if err := p.line("  %s (%s): %s", n.NodeID, n.Role, state); err != nil {
				return err
			}
		}
	}
	if !p.tty {
		return nil
	}
	_, err := fmt.Fprintf(p.w, "\r\x1b[2K%s: %s · control planes %d/%d ready · workers %d/%d ready", p.name, orUnknown(p.phase), cpReady, cpTotal, wReady, wTotal)
	p.drawn = err == nil
	return err
}

// line prints a permanent line, clearing the redrawn status line first.
func (p *progress) line(format string, args ...any) error {
	p.clear()
	_, err := fmt.Fprintf(p.w, format+"\n", args...)
	return err
}

func (p *progress) clear() {
	if p.drawn {
		_, _ = io.WriteString(p.w, "\r\x1b[2K")
		p.drawn = false
	}
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unknown"
	}
	return s
}

// caRotationLine describes the CA rotation in progress, "" when none is.
func caRotationLine(kc *api.KubernetesCluster) string {
	r := kc.Status.CARotation
	if r == nil {
		return ""
	}
	return fmt.Sprintf("CA rotation %d → %d: %s phase", r.From, r.To, r.Phase)
}
