package orchestrator

import (
	"context"
	"errors"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// LabelControlPlane is the label (and taint key) of control-plane nodes.
const LabelControlPlane = "node-role.kubernetes.io/control-plane"

// Per-node condition types: the type is the prefix followed by the node id.
const (
	// CondFinalizedPrefix + node is True once a control plane carries the
	// control-plane label and, unless scheduleOnControlPlane, the
	// NoSchedule taint; its reason (Tainted or Schedulable) says which, so
	// flipping scheduleOnControlPlane finalizes the node again.
	CondFinalizedPrefix = "Finalized/"
	// CondDrainedPrefix + node records the drain of a node leaving the
	// cluster: Draining while it runs, Drained, or DrainTimedOut naming
	// the pods that were left.
	CondDrainedPrefix = "Drained/"
)

// Reasons of the per-node conditions.
const (
	ReasonTainted       = "Tainted"
	ReasonSchedulable   = "Schedulable"
	ReasonDraining      = "Draining"
	ReasonDrained       = "Drained"
	ReasonDrainTimedOut = "DrainTimedOut"
	// ReasonNotHeartbeating: a leaving node silent for HeartbeatTimeout is
	// not drained (no kubelet would let its pods go).
	ReasonNotHeartbeating = "NotHeartbeating"
)

// controlPlaneTaint is the taint of a control plane that runs no pods.
func controlPlaneTaint() KubeTaint {
	return KubeTaint{Key: LabelControlPlane, Effect: "NoSchedule"}
}

// kubeConn dials a cluster's Kubernetes API on first use within one pass.
type kubeConn struct {
	dial KubeDialer
	c    *api.KubernetesCluster
	s    *pki.ClusterSecrets
	kc   KubeClient
}

func (k *kubeConn) client() (KubeClient, error) {
	if k.kc != nil {
		return k.kc, nil
	}
	kc, err := k.dial(k.c, k.s)
	if err != nil {
		return nil, err
	}
	k.kc = kc
	return kc, nil
}

func (k *kubeConn) close() {
	if k.kc != nil {
		k.kc.Close()
	}
}

// finalize labels every control plane and taints it unless
// scheduleOnControlPlane (removing the taint when it is), reading each node
// first and patching only what differs. A node done is recorded as a
// condition so later passes skip it; a node not registered with the API yet,
// or an API error, is retried on a later pass (again is true).
func (o *Orchestrator) finalize(ctx context.Context, k *kubeConn, c *api.KubernetesCluster, conds []api.Condition, now time.Time) ([]api.Condition, bool) {
	want := ReasonTainted
	if c.Spec.ScheduleOnControlPlane {
		want = ReasonSchedulable
	}
	cps := map[string]bool{}
	again := false
	for _, n := range c.Spec.ControlPlaneNodes {
		cps[n.NodeID] = true
		typ := CondFinalizedPrefix + n.NodeID
		if cur := findCondition(conds, typ); cur != nil && cur.Status == StatusTrue && cur.Reason == want {
			continue
		}
		msg, err := o.finalizeNode(ctx, k, n.NodeID, want == ReasonTainted)
		if errors.Is(err, ErrKubeNotFound) {
			again = true
			continue
		}
		if err != nil {
			o.log.Warn("finalize node; retrying", "cluster", c.Metadata.Name, "node", n.NodeID, "err", err)
			again = true
			continue
		}
		o.log.Info("finalized control plane", "cluster", c.Metadata.Name, "node", n.NodeID, "done", msg)
		conds = setCondition(conds, api.Condition{Type: typ, Status: StatusTrue, Reason: want, Message: msg}, now)
	}
	for _, cond := range append([]api.Condition(nil), conds...) {
		if id, ok := strings.CutPrefix(cond.Type, CondFinalizedPrefix); ok && !cps[id] {
			conds = dropCondition(conds, cond.Type)
		}
	}
	return conds, again
}

// finalizeNode brings one control plane's label and taint to what is
// wanted and says what it found or did.
func (o *Orchestrator) finalizeNode(ctx context.Context, k *kubeConn, node string, taint bool) (string, error) {
	kc, err := k.client()
	if err != nil {
		return "", err
	}
	n, err := kc.GetNode(ctx, node)
	if err != nil {
		return "", err
	}
	p := NodePatch{ResourceVersion: n.ResourceVersion}
	var did []string
	if v, ok := n.Labels[LabelControlPlane]; !ok || v != "" {
		p.Labels = map[string]string{LabelControlPlane: ""}
		did = append(did, "labeled "+LabelControlPlane)
	}
	taints, changed := withTaint(n.Taints, controlPlaneTaint(), taint)
	if changed {
		p.Taints = &taints
		if taint {
			did = append(did, "tainted "+LabelControlPlane+":NoSchedule")
		} else {
			did = append(did, "removed the "+LabelControlPlane+":NoSchedule taint")
		}
	}
	if len(did) == 0 {
		return "label and taint already as wanted", nil
	}
	if err := kc.PatchNode(ctx, node, p); err != nil {
		return "", err
	}
	return strings.Join(did, "; "), nil
}

// withTaint returns taints with t present (want) or absent, and whether
// that changed anything.
func withTaint(taints []KubeTaint, t KubeTaint, want bool) ([]KubeTaint, bool) {
	out := make([]KubeTaint, 0, len(taints)+1)
	found := false
	for _, x := range taints {
		if x.Key == t.Key && x.Effect == t.Effect {
			found = true
			if !want {
				continue
			}
		}
		out = append(out, x)
	}
	switch {
	case want && !found:
		return append(out, t), true
	case !want && found:
		return out, true
	}
	return taints, false
}
