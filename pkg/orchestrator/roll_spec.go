package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// DefaultSpecKubeletBatch is how many nodes whose spec change restarts only
// their kubelet (and kube-proxy) get their new state in one step.
const DefaultSpecKubeletBatch = 2

// planSpecRollout decides how the new states of a stored cluster's spec
// change reach its members: a control plane whose etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler or keepalived restarts gets a
// step of its own (the VIP handed over first, gates between steps); a node
// whose kubelet or kube-proxy restarts goes in a batch of batch nodes after
// them; every other change, and every member not ready (a failed step's
// node among them), is published at once. Nodes go in spec order,
// control planes first, as the plan lists them. Which units restart comes
// from the per-unit input hashes of the published and the new state. nil
// means no step is needed, and so does a move of the API endpoint
// (movesEndpoint), which reaches every member at once. ca is the CA state
// (api.CAState.Key) rendered: a CA rotation's phase rolls out this way too.
func planSpecRollout(c *api.KubernetesCluster, states map[string]*storedState, rendered map[string]*api.NodeState, batch int, ca string) *api.SpecRollout {
	if movesEndpoint(c) {
		// Every member gets its new state at once: the VIP moves in one go.
		return nil
	}
	var steps []api.UpdateStep
	var kubelets []string
	l := render.ClusterLayout(c)
	for _, m := range c.Spec.Members() {
		id := m.NodeID
		old, cur := states[id], rendered[id]
		if ns := nodeStatus(c, id); old == nil || cur == nil || ns == nil || !ns.Ready {
			// A member that is not ready serves nothing to keep up: it
			// gets its new state at once (the fix for a failed step).
			continue
		}
		// Restarted units by the reference's names, in any slot.
		restarts := plan.NodeDiff(&old.ns, cur).Restarts()
		for i, u := range restarts {
			restarts[i] = l.Reference(u)
		}
		switch {
		case c.Spec.IsControlPlane(id) && slices.ContainsFunc(restarts, isControlPlaneUnit):
			steps = append(steps, api.UpdateStep{Nodes: []string{id}, Scope: rollout.ScopeControlPlane, State: rollout.StepPending})
		case slices.Contains(restarts, render.UnitKubelet) || slices.Contains(restarts, render.UnitKubeProxy):
			kubelets = append(kubelets, id)
		}
	}
	for len(kubelets) > 0 {
		n := min(batch, len(kubelets))
		steps = append(steps, api.UpdateStep{Nodes: kubelets[:n:n], Scope: rollout.ScopeKubelet, State: rollout.StepPending})
		kubelets = kubelets[n:]
	}
	if len(steps) == 0 {
		return nil
	}
	return &api.SpecRollout{Generation: c.Metadata.Generation, CA: ca, Phase: rollout.PhaseRolling, Steps: steps}
}

func isControlPlaneUnit(name string) bool { return slices.Contains(controlPlaneUnits(), name) }

// specRolls reports whether a pass over c must (re)plan its spec rollout:
// the spec or the CA state (ca, as api.CAState.Key) changed since the last
// pass (or since the rollout was planned) on a cluster that runs, outside
// a scale and an etcd restore.
func specRolls(c *api.KubernetesCluster, ca string) bool {
	switch {
	case !isTrue(c.Status.Conditions, CondBootstrapped), c.Status.EtcdRestore != nil:
		return false
	case c.Status.Phase != api.PhaseUpdating && c.Status.Phase != api.PhaseReady && c.Status.Phase != api.PhaseDegraded:
		return false
	}
	if ro := c.Status.SpecRollout; ro != nil {
		return ro.Generation != c.Metadata.Generation || ro.CA != ca
	}
	return c.Metadata.Generation != c.Status.ObservedGeneration || c.CAStateStored().Key() != ca
}

// replanSpec puts the rollout of c's new spec generation in status (none
// when no unit restarts in a way that needs steps). A node a replaced
// rollout was moving (or failed on) gets keepalived back unless the new one
// holds it.
func (o *Orchestrator) replanSpec(c *api.KubernetesCluster, status *api.ClusterStatus, states map[string]*storedState, rendered map[string]*api.NodeState, ca string) {
	next := planSpecRollout(c, states, rendered, o.cfg.SpecKubeletBatch, ca)
	if prev := status.SpecRollout; prev != nil {
		for _, s := range prev.Steps {
			for _, id := range s.Nodes {
				if pin := status.Pins[id]; pin.VIPReleased && !next.Held(id) {
					pin.VIPReleased = false
					storePinIn(status, id, pin)
				}
			}
		}
		status.Conditions = dropCondition(status.Conditions, CondRollout)
	}
	status.SpecRollout = next
	if next != nil {
		o.log.Info("spec change rolls out step by step", "cluster", c.Metadata.Name, "generation", next.Generation, "steps", len(next.Steps))
	}
}

// storePinIn sets node id's pin in status.
func storePinIn(status *api.ClusterStatus, id string, pin api.NodePin) {
	c := api.KubernetesCluster{Status: *status}
	storePin(&c, id, pin)
	status.Pins = c.Status.Pins
}

// heldState is what a node the spec rollout holds runs meanwhile: the state
// it has, without keepalived once it released the VIP for its step.
func heldState(old *storedState, l render.Layout, vipReleased bool) *api.NodeState {
	ns := old.ns
	if vipReleased {
		ns.Units = slices.DeleteFunc(slices.Clone(ns.Units), func(u api.Unit) bool { return u.Name == l.UnitKeepalived })
	}
	return &ns
}

// rollSpecs moves every cluster's spec rollout one step forward with the
// roller and reports whether one waits on something a later pass must look
// at again.
func (o *Orchestrator) rollSpecs(ctx context.Context) bool {
	again := false
	for _, obj := range o.cfg.Node.State().List(api.KindKubernetesCluster) {
		var c api.KubernetesCluster
		if err := json.Unmarshal(obj.Data, &c); err != nil {
			continue
		}
		ro := c.Status.SpecRollout
		if ro == nil || ro.Phase == api.SpecRolloutDone || ro.Generation != c.Metadata.Generation || c.Status.Phase == api.PhaseDeleting {
			continue
		}
		co := &clusterObj{obj: obj, c: &c}
		r := &roller{
			o: o, kind: rollSpec, name: fmt.Sprintf("spec generation %d of cluster %s", ro.Generation, c.Metadata.Name),
			spec: co, now: o.cfg.Now(), clusters: map[string]*clusterObj{obj.Name: co},
		}
		wait, err := r.rollSpec(ctx)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			o.log.Warn("roll spec change", "cluster", obj.Name, "err", err)
			wait = true
		}
		again = again || wait
	}
	return again
}

// rollSpec performs the next action of the cluster's spec rollout: the
// same start, forward (VIP hand-over, move, gates) and failure as a
// ClusterUpdate step, with the node's pending state as what moves.
func (r *roller) rollSpec(ctx context.Context) (bool, error) {
	ro := r.spec.c.Status.SpecRollout
	st := api.UpdateStatus{Phase: ro.Phase, Message: ro.Message, Steps: slices.Clone(ro.Steps)}
	act := rollout.Next(st, &rollout.RolloutPlan{Name: r.name, Steps: make([]rollout.Step, len(st.Steps))})
	switch act.Kind {
	case rollout.ActStart:
		if w := r.updateRunning(); w != "" {
			return true, r.waitToStart(ctx, st, act.Step, w)
		}
		return r.start(ctx, st, act.Step)
	case rollout.ActWait:
		return r.forward(ctx, st, act.Step)
	case rollout.ActDone:
		return false, r.finish(ctx, st)
	}
	return false, nil
}

// updateRunning names a ClusterUpdate with a running step on a member of
// the spec rollout's cluster: the two never restart units at once.
func (r *roller) updateRunning() string {
	for _, obj := range r.o.cfg.Node.State().List(api.KindClusterUpdate) {
		var u api.ClusterUpdate
		if json.Unmarshal(obj.Data, &u) != nil {
			continue
		}
		for _, s := range u.Status.Steps {
			if s.State != rollout.StepRunning {
				continue
			}
			for _, id := range s.Nodes {
				if len(r.memberClusters(id)) > 0 {
					return "ClusterUpdate " + u.Metadata.Name
				}
			}
		}
	}
	return ""
}

// waitToStart records why step i does not start yet.
func (r *roller) waitToStart(ctx context.Context, st api.UpdateStatus, i int, what string) error {
	msg := fmt.Sprintf("step %d waits for %s", i+1, what)
	if st.Message == msg {
		return nil
	}
	st.Message = msg
	return r.commit(ctx, st, nil)
}

// commitSpec stores st as the cluster's spec rollout, with whatever the
// step changed on the cluster (pins, released nodes, conditions), in one
// CAS on the cluster; nothing when nothing changed.
func (r *roller) commitSpec(ctx context.Context, st api.UpdateStatus) error {
	co := r.spec
	if ro := co.c.Status.SpecRollout; ro != nil {
		next := *ro
		next.Phase, next.Message, next.Steps = st.Phase, st.Message, st.Steps
		co.c.Status.SpecRollout = &next
	}
	data, err := json.Marshal(co.c)
	if err != nil {
		return fmt.Errorf("encode cluster %s: %w", co.obj.Name, err)
	}
	var was api.KubernetesCluster
	if json.Unmarshal(co.obj.Data, &was) == nil {
		if prev, _ := json.Marshal(&was); string(prev) == string(data) {
			return nil
		}
	}
	return r.o.apply(ctx, []store.Op{{Put: &store.Put{
		Kind: api.KindKubernetesCluster, Name: co.obj.Name, Data: data, ExpectModifyIndex: store.Expect(co.obj.ModifyIndex),
	}}}, r.now)
}

// finishSpec ends the spec rollout once its last step is done; it stays in
// the status, done, until the next spec change.
func (r *roller) finishSpec(ctx context.Context, st api.UpdateStatus) error {
	c := r.spec.c
	r.o.log.Info("spec change rolled out", "cluster", c.Metadata.Name, "generation", c.Status.SpecRollout.Generation, "steps", len(st.Steps))
	dropRolloutCond(c)
	st.Phase = api.SpecRolloutDone
	return r.commitSpec(ctx, st)
}
