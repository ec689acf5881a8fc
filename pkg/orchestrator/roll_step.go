package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
)

// stepOutcome is where one pass left a running step.
type stepOutcome struct {
	// changed are the clusters whose pins moved: commit them, then wait.
	changed []*clusterObj
	// wait says what the step waits for ("" once every gate passed).
	wait string
	// failed names the failed gate: the node and what failed.
	failed string
}

// forward executes running step i: an etcd snapshot when the plan asks for
// one, then on each node cordon and drain (when its kubelet moves), the new
// pin, and the health gates; the step is done once every gate passed, and
// fails (pausing the rollout, the cluster degraded with the reason) when a
// node's units fail or StepTimeout passes.
func (r *roller) forward(ctx context.Context, st api.UpdateStatus, i int) (bool, error) {
	s := &st.Steps[i]
	if len(s.SnapshotBefore) > 0 && len(s.Snapshots) == 0 {
		if err := r.snapshots(ctx, s); err != nil {
			return r.timeout(ctx, st, i, "etcd snapshot before the first control plane: "+err.Error())
		}
		return true, r.commit(ctx, st, nil)
	}
	out := r.execute(ctx, *s, r.forwardMover(st, *s))
	switch {
	case len(out.changed) > 0:
		return true, r.commit(ctx, st, append(out.changed, r.clearRolloutConds()...))
	case out.failed != "":
		return r.fail(ctx, st, i, out.failed)
	case out.wait != "":
		return r.timeout(ctx, st, i, out.wait)
	}
	st.Steps[i].Message = ""
	next, err := rollout.MarkDone(st, i, r.stamp())
	if err != nil {
		return false, err
	}
	r.o.log.Info(r.kind+" step done", r.logKey(), r.name, "step", i+1, "nodes", s.Nodes)
	if next.Phase == rollout.PhaseDone {
		return false, r.finish(ctx, next)
	}
	return true, r.commit(ctx, next, nil)
}

// revert moves step i's nodes back to their cluster's release (drops the
// pins the step set), with the same drain and gates as forward.
func (r *roller) revert(ctx context.Context, st api.UpdateStatus, i int) (bool, error) {
	s := st.Steps[i]
	out := r.execute(ctx, s, pinMover{r: r, step: s.Scope, want: func(c *api.KubernetesCluster) string { return c.Status.KubernetesVersion }})
	switch {
	case len(out.changed) > 0:
		return true, r.commit(ctx, st, append(out.changed, r.clearRolloutConds()...))
	case out.failed == "" && out.wait == "":
		next, err := rollout.MarkRolledBack(st, i, r.stamp())
		if err != nil {
			return false, err
		}
		r.o.log.Info(r.kind+" step rolled back", r.logKey(), r.name, "step", i+1, "nodes", s.Nodes)
		return next.Phase != rollout.PhaseFailed, r.commit(ctx, next, r.clearRolloutConds())
	}
	reason := out.failed
	if reason == "" {
		if !r.expired(s) {
			return true, nil
		}
		reason = fmt.Sprintf("%s (after %s)", out.wait, r.o.cfg.StepTimeout)
	}
	st.Phase = rollout.PhaseFailed
	st.Message = fmt.Sprintf("rollback of step %d failed: %s", i+1, reason)
	return false, r.commit(ctx, st, r.degrade(s, st.Message))
}

// timeout keeps waiting on running step i until StepTimeout, then fails it
// with what it waited for. While it waits, the step's message says for
// what (kctl update status shows it).
func (r *roller) timeout(ctx context.Context, st api.UpdateStatus, i int, wait string) (bool, error) {
	if !r.expired(st.Steps[i]) {
		msg := "waiting: " + wait
		if st.Steps[i].Message == msg {
			return true, nil
		}
		st.Steps[i].Message = msg
		return true, r.commit(ctx, st, nil)
	}
	return r.fail(ctx, st, i, fmt.Sprintf("%s (after %s)", wait, r.o.cfg.StepTimeout))
}

func (r *roller) expired(s api.UpdateStep) bool {
	t, err := time.Parse(time.RFC3339, s.StartedAt)
	return err == nil && r.now.Sub(t) >= r.o.cfg.StepTimeout
}

// fail pauses the rollout on step i and degrades the step's clusters with
// the reason.
func (r *roller) fail(ctx context.Context, st api.UpdateStatus, i int, reason string) (bool, error) {
	next, err := rollout.MarkFailed(st, i, r.stamp(), reason)
	if err != nil {
		return false, err
	}
	msg := r.pausedMessage(i, reason)
	r.o.log.Warn(r.kind+" step failed", r.logKey(), r.name, "step", i+1, "reason", reason)
	return false, r.commit(ctx, next, r.degrade(st.Steps[i], msg))
}

// degrade sets CondRollout False with msg on the clusters of step s's
// nodes, which keeps them degraded.
func (r *roller) degrade(s api.UpdateStep, msg string) []*clusterObj {
	var out []*clusterObj
	for _, id := range s.Nodes {
		for _, co := range r.memberClusters(id) {
			if slices.Contains(out, co) {
				continue
			}
			c := co.c
			c.Status.Conditions = setCondition(slices.Clone(c.Status.Conditions), api.Condition{
				Type: CondRollout, Status: StatusFalse, Reason: "StepFailed", Message: msg,
			}, r.now)
			out = append(out, co)
		}
	}
	return out
}

// snapshots takes the etcd snapshots step s asks for and records them.
func (r *roller) snapshots(ctx context.Context, s *api.UpdateStep) error {
	for _, name := range s.SnapshotBefore {
		co := r.clusters[name]
		if co == nil {
			continue
		}
		sec, _, err := r.o.loadSecrets(name)
		if err != nil {
			return err
		}
		snap, err := r.o.takeEtcdSnapshot(ctx, co.c, sec, "before ClusterUpdate "+r.name)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", name, err)
		}
		s.Snapshots = append(s.Snapshots, snap)
		r.o.log.Info("etcd snapshot before the first control plane", r.logKey(), r.name, "cluster", name, "snapshot", snap)
	}
	return nil
}

// execute moves step s's nodes with mv (a release pin, or the node's
// pending spec state) and checks its gates.
func (r *roller) execute(ctx context.Context, s api.UpdateStep, mv mover) stepOutcome {
	var out stepOutcome
	var waits []string
	for _, id := range s.Nodes {
		for _, co := range r.memberClusters(id) {
			c := co.c
			k, err := r.kube(c)
			if err != nil {
				waits = append(waits, err.Error())
				continue
			}
			if mv.drains() {
				if left, err := r.drain(ctx, k, s, id); err != nil || len(left) > 0 {
					waits = append(waits, drainWait(id, left, err))
					k.close()
					continue
				}
			}
			changed, wait := r.activate(co, id, mv)
			if changed || wait != "" {
				if changed {
					out.changed = append(out.changed, co)
				} else {
					waits = append(waits, wait)
				}
				k.close()
				continue
			}
			failed, wait := r.gate(ctx, k, co, id, mv)
			switch {
			case failed != "":
				out.failed = failed
			case wait != "":
				waits = append(waits, wait)
			case movesVIP(c, id, mv.scope()) && c.Status.Pins[id].VIPReleased:
				// Healthy on its new state: keepalived may run here again
				// (nopreempt: the VIP stays where it went).
				pin := c.Status.Pins[id]
				pin.VIPReleased = false
				storePin(c, id, pin)
				out.changed = append(out.changed, co)
			case mv.drains():
				if err := uncordon(ctx, k, id); err != nil {
					waits = append(waits, fmt.Sprintf("uncordon %s: %v", id, err))
				}
			}
			k.close()
		}
	}
	out.wait = strings.Join(waits, "; ")
	return out
}

// activate moves node id of co with mv (nothing once it moved). A control
// plane that may hold the VIP and whose API server the move restarts first
// releases the VIP (keepalived stops there, and the VIP moves while
// kube-apiserver still serves), and moves once it applied that.
func (r *roller) activate(co *clusterObj, id string, mv mover) (changed bool, wait string) {
	c := co.c
	if !mv.pending(co, id) {
		return false, ""
	}
	if movesVIP(c, id, mv.scope()) {
		if pin := c.Status.Pins[id]; !pin.VIPReleased {
			pin.VIPReleased = true
			r.o.log.Info("release the VIP before the control plane moves", r.logKey(), r.name, "cluster", c.Metadata.Name, "node", id)
			return storePin(c, id, pin), ""
		}
		if w := r.applied(c, id); w != "" {
			return false, w
		}
	}
	return mv.move(co, id)
}

// applied says what node id of c still has to apply: its published state
// (matching its pin's VIP release) at the generation it reported.
func (r *roller) applied(c *api.KubernetesCluster, id string) string {
	st, wait := r.published(c, id)
	if wait != "" {
		return wait
	}
	if ns := nodeStatus(c, id); ns == nil || ns.ObservedGeneration != st.ns.Generation {
		return fmt.Sprintf("%s: applying generation %d", id, st.ns.Generation)
	}
	return ""
}

// published is node id's stored state in c once it is rendered from the
// node's current pin: keepalived absent exactly while the node has
// released the VIP.
func (r *roller) published(c *api.KubernetesCluster, id string) (*storedState, string) {
	states, err := r.o.loadStates(c.Metadata.Name)
	if err != nil {
		return nil, err.Error()
	}
	st := states[id]
	if st == nil {
		return nil, fmt.Sprintf("%s has no state in cluster %s yet", id, c.Metadata.Name)
	}
	if c.Spec.HighAvailability.Enabled && c.Spec.IsControlPlane(id) && hasUnit(st, render.ClusterLayout(c).UnitKeepalived) == c.Status.Pins[id].VIPReleased {
		return nil, fmt.Sprintf("%s: keepalived state not published yet", id)
	}
	return st, ""
}

// nodeStatus is node id's entry in c's status, or nil.
func nodeStatus(c *api.KubernetesCluster, id string) *api.NodeStatus {
	for i := range c.Status.Nodes {
		if c.Status.Nodes[i].NodeID == id {
			return &c.Status.Nodes[i]
		}
	}
	return nil
}

// drains reports whether a step of scope moves the kubelet, so its node is
// cordoned and drained first.
func drains(scope string) bool { return scope != rollout.ScopeControlPlane }

func drainWait(id string, left []string, err error) string {
	if err != nil {
		return fmt.Sprintf("drain %s: %v", id, err)
	}
	return fmt.Sprintf("drain %s: waiting for %s to leave", id, strings.Join(left, ", "))
}

// kube dials c's Kubernetes API with its secrets.
func (r *roller) kube(c *api.KubernetesCluster) (*kubeConn, error) {
	sec, _, err := r.o.loadSecrets(c.Metadata.Name)
	if err != nil {
		return nil, fmt.Errorf("cluster %s secrets: %w", c.Metadata.Name, err)
	}
	return &kubeConn{dial: r.o.cfg.Kube, c: c, s: sec}, nil
}

// drain cordons and drains node id; pods still on it after DrainTimeout
// (counted from the step's start) are left, as kubectl drain --timeout
// would, and logged.
func (r *roller) drain(ctx context.Context, k *kubeConn, s api.UpdateStep, id string) ([]string, error) {
	round, err := r.o.drainOnce(ctx, k, id)
	if err == nil && len(round.left) == 0 {
		return nil, nil
	}
	if t, perr := time.Parse(time.RFC3339, s.StartedAt); perr == nil && r.now.Sub(t) >= r.o.cfg.DrainTimeout {
		r.o.log.Warn("drain timed out; updating the node anyway", r.logKey(), r.name, "node", id, "left", round.left, "err", err)
		return nil, nil
	}
	return round.left, err
}

func uncordon(ctx context.Context, k *kubeConn, id string) error {
	kc, err := k.client()
	if err != nil {
		return err
	}
	n, err := kc.GetNode(ctx, id)
	if errors.Is(err, ErrKubeNotFound) {
		return nil
	}
	if err != nil || !n.Unschedulable {
		return err
	}
	no := false
	return kc.PatchNode(ctx, id, NodePatch{Unschedulable: &no})
}

// wantPin is node id's pin in c once scope's components run release v. A
// component on the cluster's own release needs no pin.
func wantPin(c *api.KubernetesCluster, id, scope, v string) api.NodePin {
	pin := c.Status.Pins[id]
	if v == c.Status.KubernetesVersion {
		v = ""
	}
	if c.Spec.IsControlPlane(id) && scope != rollout.ScopeKubelet {
		pin.ControlPlane = v
	}
	if scope != rollout.ScopeControlPlane {
		pin.Kubelet = v
	}
	return pin
}

// storePin sets node id's pin in c (none when it is empty) and reports
// whether it changed.
func storePin(c *api.KubernetesCluster, id string, pin api.NodePin) bool {
	if c.Status.Pins[id] == pin {
		return false
	}
	pins := maps.Clone(c.Status.Pins)
	if pins == nil {
		pins = map[string]api.NodePin{}
	}
	if pin == (api.NodePin{}) {
		delete(pins, id)
	} else {
		pins[id] = pin
	}
	if len(pins) == 0 {
		pins = nil
	}
	c.Status.Pins = pins
	return true
}

// movesVIP reports whether updating node id of c in scope restarts
// kube-apiserver on a control plane that may hold the cluster's VIP.
func movesVIP(c *api.KubernetesCluster, id, scope string) bool {
	return c.Spec.HighAvailability.Enabled && c.Spec.IsControlPlane(id) && scope != rollout.ScopeKubelet
}

// gate checks node id of cluster co after mv moved it: the state carrying
// the move is published and applied and every unit healthy, the cluster is ready
// again (etcd healthy and /readyz through the API endpoint answered after
// that apply), and, when its kubelet moved, the Kubernetes Node is Ready
// and reports v. failed is set when the node's units failed (crash-looping)
// and the cluster degraded.
func (r *roller) gate(ctx context.Context, k *kubeConn, co *clusterObj, id string, mv mover) (failed, wait string) {
	c := co.c
	name := c.Metadata.Name
	scope := mv.scope()
	st, wait := r.published(c, id)
	if wait != "" {
		return "", wait
	}
	if w := mv.published(c, id, st); w != "" {
		return "", w
	}
	ns := nodeStatus(c, id)
	switch {
	case ns == nil:
		return "", fmt.Sprintf("%s: no status yet", id)
	case c.Status.Phase == api.PhaseDegraded && !ns.Ready:
		return fmt.Sprintf("node %s of cluster %s: %s", id, name, ns.Message), ""
	case ns.ObservedGeneration != st.ns.Generation:
		return "", fmt.Sprintf("%s: applying generation %d", id, st.ns.Generation)
	case !ns.Ready:
		return "", fmt.Sprintf("%s: %s", id, ns.Message)
	case c.Status.Phase != api.PhaseReady:
		return "", fmt.Sprintf("cluster %s is %s", name, c.Status.Phase)
	}
	if scope != rollout.ScopeKubelet && c.Spec.IsControlPlane(id) {
		if w := r.o.cfg.Checker.EtcdCaughtUp(ctx, c, k.s, id); w != "" {
			return "", w
		}
	}
	if scope == rollout.ScopeControlPlane || !isTrue(c.Status.Conditions, CondBootstrapped) {
		return "", ""
	}
	kc, err := k.client()
	if err != nil {
		return "", err.Error()
	}
	n, err := kc.GetNode(ctx, id)
	switch {
	case err != nil:
		return "", fmt.Sprintf("kubernetes node %s: %v", id, err)
	case !n.Ready:
		return "", fmt.Sprintf("kubernetes node %s is not Ready", id)
	case mv.kubelet(c) != "" && n.KubeletVersion != mv.kubelet(c):
		return "", fmt.Sprintf("kubernetes node %s reports kubelet %s, want %s", id, n.KubeletVersion, mv.kubelet(c))
	}
	return "", ""
}

// versionUnit is the unit whose release proves node id's scope moved.
func versionUnit(c *api.KubernetesCluster, id, scope string) string {
	l := render.ClusterLayout(c)
	if scope != rollout.ScopeKubelet && c.Spec.IsControlPlane(id) {
		return l.UnitAPIServer
	}
	if scope == rollout.ScopeControlPlane {
		return ""
	}
	return l.UnitKubelet
}

func unitVersion(st *storedState, name string) string {
	for _, u := range st.ns.Units {
		if u.Name == name {
			return u.Version
		}
	}
	return ""
}
