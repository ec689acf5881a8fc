package orchestrator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// The Teardown condition of a cluster being deleted.
const (
	// CondTeardown says which nodes a delete waits for.
	CondTeardown = "Teardown"
	// ReasonTearingDown: nodes are still within DeleteTimeout.
	ReasonTearingDown = "TearingDown"
	// ReasonTeardownStuck: nodes passed DeleteTimeout without reporting
	// their teardown; --force finishes the delete without them.
	ReasonTeardownStuck = "Stuck"
)

// teardownState is what a node leaving a cluster is given: nothing, so its
// agent stops every unit and removes every file it wrote for the cluster.
// Volumes are kept unless purge lists them (the node's last rendered
// volumes, for a delete with --purge-volumes): the agent then unmounts and
// deletes those it created.
func teardownState(cluster, node string, gen int64, purge []api.VolumeOp) *api.NodeState {
	return &api.NodeState{Cluster: cluster, NodeID: node, Generation: gen, PurgeVolumes: purge}
}

// teardownStep moves one node's teardown forward: it publishes the empty
// state, or — once the node reported it, is unregistered, or stayed silent
// for DeleteGrace — deletes the state and the node's report. done is true
// when the node has nothing left to do. purge asks the node to delete the
// volumes of its last rendered state; giveUp (a forced delete past
// DeleteTimeout) stops waiting for the node once its empty state is out.
func (o *Orchestrator) teardownStep(cluster, node string, st *storedState, rep *reportObj, force, purge, giveUp bool, now time.Time) ([]store.Op, bool, error) {
	if !st.empty() {
		var vols []api.VolumeOp
		if purge {
			vols = st.ns.Volumes
		}
		op, err := o.putState(teardownState(cluster, node, st.ns.Generation+1, vols), st)
		if err != nil {
			return nil, false, err
		}
		o.log.Info("tear down node state", "cluster", cluster, "node", node, "generation", st.ns.Generation+1)
		return []store.Op{op}, false, nil
	}
	if !giveUp && !o.tornDown(node, st, rep, force, now) {
		return nil, false, nil
	}
	name := apiv1.NodeStateName(cluster, node)
	ops := []store.Op{{Delete: &store.Delete{Kind: api.KindNodeState, Name: name, ExpectModifyIndex: store.Expect(st.obj.ModifyIndex)}}}
	if rep != nil {
		ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindNodeReport, Name: name, ExpectModifyIndex: store.Expect(rep.obj.ModifyIndex)}})
	}
	return ops, true, nil
}

// tornDown reports whether node finished (or can no longer finish) applying
// its empty state: it reported that generation, it is not registered, or it
// sent no heartbeat for DeleteGrace (HeartbeatTimeout with force; counted
// from this leader's start when it never sent one here).
func (o *Orchestrator) tornDown(node string, st *storedState, rep *reportObj, force bool, now time.Time) bool {
	if rep != nil && rep.r.ObservedGeneration >= st.ns.Generation {
		return true
	}
	if _, ok := o.cfg.Node.State().Get(api.KindNode, node); !ok {
		return true
	}
	seen, ok := o.lastSeen(node)
	if !ok {
		seen = o.started
	}
	grace := o.cfg.DeleteGrace
	if force {
		grace = o.cfg.HeartbeatTimeout
	}
	return now.Sub(seen) > grace
}

// reconcileDelete tears the cluster down: empty states for every node, then
// — once every node applied them — the states, reports, secrets and finally
// the cluster object, in one batch.
func (o *Orchestrator) reconcileDelete(ctx context.Context, obj store.Object, c *api.KubernetesCluster) (bool, error) {
	name := c.Metadata.Name
	now := o.cfg.Now()
	states, err := o.loadStates(name)
	if err != nil {
		return false, err
	}
	reports := o.loadReports(name)
	ids := make([]string, 0, len(states))
	for id := range states {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	force := isTrue(c.Status.Conditions, api.ConditionForceDelete)
	since := now.UTC().Format(time.RFC3339)
	if cond := findCondition(c.Status.Conditions, CondTeardown); cond != nil && cond.Since != "" {
		since = cond.Since
	}
	late := overdue(since, now, o.cfg.DeleteTimeout)
	var ops []store.Op
	var waiting []string
	for _, id := range ids {
		step, done, err := o.teardownStep(name, id, states[id], reports[id],
			force, isTrue(c.Status.Conditions, api.ConditionPurgeVolumes), force && late, now)
		if err != nil {
			return false, err
		}
		if !done {
			waiting = append(waiting, id)
		}
		ops = append(ops, step...)
	}
	if len(waiting) > 0 {
		status := c.Status
		status.Conditions = setCondition(append([]api.Condition(nil), c.Status.Conditions...), api.Condition{
			Type: CondNodesApplied, Status: StatusFalse, Reason: "TearingDown",
			Message: "waiting for " + strings.Join(waiting, ", ") + " to stop every unit",
		}, now)
		status.Conditions = setCondition(status.Conditions, teardownCondition(name, waiting, late, o.cfg.DeleteTimeout), now)
		return true, o.commit(ctx, c, obj, status, ops, false, now)
	}
	// Every node is done: the deletes of this pass already cover states
	// and reports; add the other reports, the secrets and the cluster.
	for id, rep := range reports {
		if _, ok := states[id]; !ok {
			ops = append(ops, store.Op{Delete: &store.Delete{Kind: apiv1.KindNodeReport, Name: rep.obj.Name, ExpectModifyIndex: store.Expect(rep.obj.ModifyIndex)}})
		}
	}
	if sec, ok := o.cfg.Node.State().Get(store.KindSecret, secretName(name)); ok {
		ops = append(ops, store.Op{Delete: &store.Delete{Kind: store.KindSecret, Name: sec.Name, ExpectModifyIndex: store.Expect(sec.ModifyIndex)}})
	}
	ops = append(ops, store.Op{Delete: &store.Delete{Kind: api.KindKubernetesCluster, Name: obj.Name, ExpectModifyIndex: store.Expect(obj.ModifyIndex)}})
	if err := o.apply(ctx, ops, now); err != nil {
		return false, fmt.Errorf("delete cluster %s: %w", name, err)
	}
	o.log.Info("cluster deleted", "cluster", name)
	return false, nil
}

// teardownCondition is the Teardown condition of a delete waiting for
// nodes: TearingDown, or Stuck once DeleteTimeout passed (late), naming the
// nodes and the way to finish without them.
func teardownCondition(cluster string, waiting []string, late bool, timeout time.Duration) api.Condition {
	nodes := strings.Join(waiting, ", ")
	if late {
		return api.Condition{Type: CondTeardown, Status: StatusFalse, Reason: ReasonTeardownStuck,
			Message: fmt.Sprintf("%s did not report its teardown within %s; run `kctl kubernetes delete %s --force` to finish without it (its units may keep running)", nodes, timeout, cluster)}
	}
	return api.Condition{Type: CondTeardown, Status: StatusFalse, Reason: ReasonTearingDown,
		Message: fmt.Sprintf("waiting for %s to report its teardown (stuck after %s)", nodes, timeout)}
}

// overdue reports whether a teardown that started at since (RFC 3339) has
// run longer than timeout at now; an unknown start is never overdue.
func overdue(since string, now time.Time, timeout time.Duration) bool {
	start, err := time.Parse(time.RFC3339, since)
	if err != nil {
		return false
	}
	return now.Sub(start) > timeout
}
