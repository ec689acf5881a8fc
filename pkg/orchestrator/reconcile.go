package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/store"
)

// reconcile runs one pass over the cluster name: it reports whether the
// cluster waits on something a later pass must look at again.
func (o *Orchestrator) reconcile(ctx context.Context, name string, checkHealth bool) (bool, error) {
	obj, ok := o.cfg.Node.State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return false, nil
	}
	var c api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &c); err != nil {
		return false, fmt.Errorf("decode cluster %s: %w", name, err)
	}
	if c.Status.Phase == api.PhaseDeleting {
		return o.reconcileDelete(ctx, obj, &c)
	}
	now := o.cfg.Now()
	var ops []store.Op
	sec, secOp, err := o.ensureSecrets(&c, now)
	if err != nil {
		return false, err
	}
	if secOp != nil {
		ops = append(ops, *secOp)
	}
	states, err := o.loadStates(name)
	if err != nil {
		return false, err
	}
	reports := o.loadReports(name)
	status := c.Status
	status.Conditions = append([]api.Condition(nil), c.Status.Conditions...)
	certs, certCond, err := certificates(&c, sec, now)
	if err != nil {
		return false, err
	}
	status.Certificates = certs
	status.Conditions = setCondition(status.Conditions, certCond, now)
	ca := sec.CAState()
	status.CAGeneration, status.CARotation = ca.Generation, ca.Rotation
	if status.KubernetesVersion == "" && o.cfg.RenderOptions.KubernetesVersion != "" {
		// A new cluster records the controller's release: only a
		// ClusterUpdate moves it from now on.
		status.KubernetesVersion = o.cfg.RenderOptions.KubernetesVersion
	}
	rc := c
	rc.Status.KubernetesVersion = status.KubernetesVersion

	opts := o.cfg.RenderOptions
	opts.EtcdClusterExists = etcdExists(&c, states)
	opts.EtcdRestoreSnapshot = o.restoreInput(&c, &status, now)
	rc.Status.EtcdRestore = status.EtcdRestore
	rendered, err := render.Render(&rc, sec, o.loadNodes(&c), opts)
	if err != nil {
		o.log.Warn("render cluster", "cluster", name, "err", err)
		status.Conditions = setCondition(status.Conditions, api.Condition{
			Type: CondNodesApplied, Status: StatusFalse, Reason: "RenderFailed", Message: err.Error(),
		}, now)
		return false, o.commit(ctx, &c, obj, status, ops, false, now)
	}
	kube := &kubeConn{dial: o.cfg.Kube, c: &c, s: sec}
	defer kube.close()

	// A node leaving is drained first, then etcd membership changes: a
	// control plane leaves etcd after its drain and before its units stop,
	// and joins as a learner before etcd starts.
	var draining []string
	status.Conditions, draining = o.drainLeavers(ctx, kube, &c, states, status.Conditions, now)
	var mem membershipStep
	if c.Status.Phase == api.PhaseScaling && isTrue(c.Status.Conditions, CondBootstrapped) && controlPlanesChange(&c, states) {
		mem = o.syncEtcd(ctx, &c, sec, states, reports, draining)
		status.Conditions = setCondition(status.Conditions, mem.cond, now)
		if !mem.pending && mem.cond.Status == StatusTrue {
			// etcd's members match the control planes again.
			status.EtcdStaleMembers = nil
		}
	}

	// A spec change that restarts control-plane units or kubelets reaches
	// the nodes step by step (rollSpecs); until its step, a node keeps what
	// it runs.
	if specRolls(&c, ca.Key()) {
		o.replanSpec(&c, &status, states, rendered, ca.Key())
	}
	gens := map[string]int64{}
	published := false
	for _, m := range c.Spec.Members() {
		id := m.NodeID
		old := states[id]
		if mem.hold[id] {
			if old != nil {
				gens[id] = old.ns.Generation
			}
			continue
		}
		want := rendered[id]
		if old != nil && status.SpecRollout.Held(id) {
			want = heldState(old, render.ClusterLayout(&c), status.Pins[id].VIPReleased)
		}
		if old != nil && old.hash == render.Hash(want) {
			gens[id] = old.ns.Generation
			continue
		}
		want.Generation = 1
		if old != nil {
			want.Generation = old.ns.Generation + 1
		}
		op, err := o.putState(want, old)
		if err != nil {
			return false, err
		}
		ops = append(ops, op)
		gens[id] = want.Generation
		published = true
		o.log.Info("publish node state", "cluster", name, "node", id, "generation", want.Generation)
	}
	leaving, leftOps, err := o.removeLeavers(ctx, kube, &c, states, reports, draining, now)
	if err != nil {
		return false, err
	}
	ops = append(ops, leftOps...)

	ob := o.observe(&c, gens, reports, now)
	status.Nodes = ob.nodes
	status.ObservedGeneration = c.Metadata.Generation
	status.Conditions = setCondition(status.Conditions, appliedCondition(ob), now)
	status.Conditions = setCondition(status.Conditions, ob.heartbeat, now)
	stale := findCondition(status.Conditions, CondAPIReady) == nil || findCondition(status.Conditions, CondEtcdHealthy) == nil
	switch {
	case ob.allApplied && (checkHealth || transitional(status.Phase) || stale),
		checkHealth && isTrue(status.Conditions, CondBootstrapped):
		h := o.checkHealth(ctx, &c, sec, &status)
		for _, hc := range healthConditions(h) {
			status.Conditions = setCondition(status.Conditions, hc, now)
		}
		if h.Etcd.OK && o.cfg.Etcd != nil && c.Status.Phase != api.PhaseScaling && c.Status.EtcdRestore == nil {
			status.Conditions = setCondition(status.Conditions, o.checkMembers(ctx, &c, sec, &status), now)
		}
		status.Conditions = o.addonsCondition(ctx, kube, &c, rendered, h.API.OK, status.Conditions, now)
		status.LastHealthCheck = now.UTC().Format(time.RFC3339)
		status.HealthInterval = o.cfg.HealthInterval.String()
	case !ob.allApplied && !isTrue(status.Conditions, CondBootstrapped):
		for _, typ := range []string{CondEtcdHealthy, CondAPIReady} {
			status.Conditions = setCondition(status.Conditions, api.Condition{
				Type: typ, Status: StatusUnknown, Reason: "WaitingForNodes", Message: "checked once every member applied its state",
			}, now)
		}
	}
	addonsDown := addonsOverdue(status.Conditions, now, o.cfg.AddonGrace)
	status.Phase = nextPhase(status.Phase, status.Conditions, ob, published || leaving, mem.pending || leaving, addonsDown)
	if status.Phase == api.PhaseReady {
		status.Conditions = setCondition(status.Conditions, api.Condition{
			Type: CondBootstrapped, Status: StatusTrue, Reason: "Ready", Message: "the cluster was ready once",
		}, now)
		if findCondition(status.Conditions, CondEtcdMembership) != nil && !mem.pending {
			status.Conditions = dropCondition(status.Conditions, CondEtcdMembership)
		}
	}
	restored := o.finishRestore(&c, &status, now)
	finalizing := false
	if isTrue(status.Conditions, CondBootstrapped) && isTrue(status.Conditions, CondAPIReady) {
		status.Conditions, finalizing = o.finalize(ctx, kube, &c, status.Conditions, now)
	}
	if status.Phase != c.Status.Phase {
		o.log.Info("cluster phase", "cluster", name, "from", c.Status.Phase, "to", status.Phase)
	}
	// Waiting on health, etcd or a leaving node needs a timed retry;
	// waiting on agents does not: their reports wake the loop, but a
	// restarting unit's report may not change before crashLoopAfter.
	again := (transitional(status.Phase) && ob.allApplied) || len(ob.churn) > 0 || leaving || mem.pending || finalizing
	if err := o.commit(ctx, &c, obj, status, ops, checkHealth, now); err != nil {
		return again, err
	}
	o.auditRestore(ctx, &c, restored, now)
	return again, nil
}

// commit writes ops and, when it changed, the cluster's status in one CAS
// batch; nothing at all when neither changed. With healthPass a new
// status.lastHealthCheck alone is a change.
func (o *Orchestrator) commit(ctx context.Context, c *api.KubernetesCluster, obj store.Object, status api.ClusterStatus, ops []store.Op, healthPass bool, now time.Time) error {
	if !sameStatus(status, c.Status, healthPass) {
		nc := *c
		nc.Status = status
		data, err := json.Marshal(&nc)
		if err != nil {
			return fmt.Errorf("encode cluster %s: %w", c.Metadata.Name, err)
		}
		ops = append(ops, store.Op{Put: &store.Put{
			Kind: api.KindKubernetesCluster, Name: obj.Name, Data: data, ExpectModifyIndex: store.Expect(obj.ModifyIndex),
		}})
	}
	return o.apply(ctx, ops, now)
}

// apply commits ops as one batch stamped with now.
func (o *Orchestrator) apply(ctx context.Context, ops []store.Op, now time.Time) error {
	if len(ops) == 0 {
		return nil
	}
	cmd, err := store.Batch{Ops: ops}.Command()
	if err != nil {
		return err
	}
	cmd.Time = now.UTC().Format(time.RFC3339Nano)
	if _, err := o.cfg.Node.Apply(ctx, cmd); err != nil {
		return fmt.Errorf("commit %d changes: %w", len(ops), err)
	}
	return nil
}

// leavers are the nodes that have a NodeState but left the cluster, sorted.
func leavers(c *api.KubernetesCluster, states map[string]*storedState) []string {
	members := map[string]bool{}
	for _, m := range c.Spec.Members() {
		members[m.NodeID] = true
	}
	ids := make([]string, 0, len(states))
	for id := range states {
		if !members[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// drainLeavers moves the drain of every leaving node whose teardown has not
// started forward (drainStep) and returns the nodes still draining. conds
// come back with the drain conditions updated, and those of nodes that are
// members again dropped. A cluster that was never ready has no API to
// drain through.
func (o *Orchestrator) drainLeavers(ctx context.Context, kube *kubeConn, c *api.KubernetesCluster, states map[string]*storedState, conds []api.Condition, now time.Time) ([]api.Condition, []string) {
	for _, m := range c.Spec.Members() {
		if findCondition(conds, CondDrainedPrefix+m.NodeID) != nil {
			conds = dropCondition(conds, CondDrainedPrefix+m.NodeID)
		}
	}
	if !isTrue(c.Status.Conditions, CondBootstrapped) {
		return conds, nil
	}
	var draining []string
	for _, id := range leavers(c, states) {
		if states[id].empty() {
			continue
		}
		if o.silent(id, now) {
			// A dead machine (a control plane being replaced) has no
			// kubelet to let its pods go: waiting for them would only hold
			// its etcd member, and so the replacement, for DrainTimeout.
			// Its pods are recreated elsewhere once its Node is deleted.
			if cur := findCondition(conds, CondDrainedPrefix+id); cur == nil || cur.Reason == ReasonDraining {
				conds = setCondition(conds, api.Condition{
					Type: CondDrainedPrefix + id, Status: StatusTrue, Reason: ReasonNotHeartbeating,
					Message: fmt.Sprintf("no heartbeat for %s: not drained", o.cfg.HeartbeatTimeout),
				}, now)
			}
			continue
		}
		var drained bool
		if conds, drained = o.drainStep(ctx, kube, c.Metadata.Name, id, conds, now); !drained {
			draining = append(draining, id)
		}
	}
	return conds, draining
}

// silent reports whether node sent no heartbeat for HeartbeatTimeout
// (counted from this leader's start when it never sent one here).
func (o *Orchestrator) silent(node string, now time.Time) bool {
	seen, ok := o.lastSeen(node)
	if !ok {
		if o.cfg.LastSeen == nil {
			return false
		}
		seen = o.started
	}
	return now.Sub(seen) > o.cfg.HeartbeatTimeout
}

// removeLeavers tears down the NodeStates of nodes that left the cluster
// once drained (drainLeavers): an empty state first (the agent stops units
// and removes files), then, once the node reported it or is gone, its Node
// object is deleted from the Kubernetes API (when the cluster was ever
// ready) and its state and report from the store. leaving is true while any
// is in progress.
func (o *Orchestrator) removeLeavers(ctx context.Context, kube *kubeConn, c *api.KubernetesCluster, states map[string]*storedState, reports map[string]*reportObj, draining []string, now time.Time) (bool, []store.Op, error) {
	ids := leavers(c, states)
	var ops []store.Op
	name := c.Metadata.Name
	for _, id := range ids {
		if slices.Contains(draining, id) {
			continue
		}
		st := states[id]
		// A silent node cannot apply its empty state: once it has been
		// silent for HeartbeatTimeout its teardown is over (as a forced
		// delete's), so its Node object goes without waiting DeleteGrace.
		op, done, err := o.teardownStep(name, id, st, reports[id], o.silent(id, now), false, false, now)
		if err != nil {
			return false, nil, err
		}
		if done && isTrue(c.Status.Conditions, CondBootstrapped) {
			if err := o.deleteKubeNode(ctx, kube, name, id, st, now); err != nil {
				o.log.Warn("delete kubernetes node; retrying", "cluster", name, "node", id, "err", err)
				continue
			}
		}
		ops = append(ops, op...)
	}
	return len(ids) > 0, ops, nil
}

// etcdExists reports whether new control planes must join a running etcd:
// the cluster was ready once and is scaling, or a published state already
// says so (it stays so, to not flap every control plane's generation).
func etcdExists(c *api.KubernetesCluster, states map[string]*storedState) bool {
	if isTrue(c.Status.Conditions, CondBootstrapped) && c.Status.Phase == api.PhaseScaling {
		return true
	}
	unit := render.ClusterLayout(c).UnitEtcd
	for _, s := range states {
		for _, u := range s.ns.Units {
			if u.Name == unit && containsArg(u.Argv, "--initial-cluster-state=existing") {
				return true
			}
		}
	}
	return false
}

// controlPlanesChange reports whether etcd membership may have to change:
// a control plane of the spec has no etcd unit published yet, a node that
// runs one left the control planes, an earlier membership step is not
// finished, or the last health check found stale members.
func controlPlanesChange(c *api.KubernetesCluster, states map[string]*storedState) bool {
	if len(c.Status.EtcdStaleMembers) > 0 {
		return true
	}
	if cond := findCondition(c.Status.Conditions, CondEtcdMembership); cond != nil && cond.Status != StatusTrue {
		return true
	}
	cps := map[string]bool{}
	unit := render.ClusterLayout(c).UnitEtcd
	for _, n := range c.Spec.ControlPlaneNodes {
		cps[n.NodeID] = true
		if st := states[n.NodeID]; st == nil || !hasUnit(st, unit) {
			return true
		}
	}
	for id, st := range states {
		if !cps[id] && hasUnit(st, unit) {
			return true
		}
	}
	return false
}

func hasUnit(st *storedState, name string) bool {
	for _, u := range st.ns.Units {
		if u.Name == name {
			return true
		}
	}
	return false
}

func containsArg(argv []string, arg string) bool {
	for _, a := range argv {
		if a == arg {
			return true
		}
	}
	return false
}

// dropCondition removes the condition typ.
func dropCondition(cs []api.Condition, typ string) []api.Condition {
	out := cs[:0]
	for _, c := range cs {
		if c.Type != typ {
			out = append(out, c)
		}
	}
	return out
}
