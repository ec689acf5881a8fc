package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// CondRollout is the cluster condition the roller owns: False while a
// ClusterUpdate touching the cluster is paused on a failed health gate
// (the cluster is degraded with the reason); it is dropped once the
// rollout moves again.
const CondRollout = "Rollout"

// rollUpdates moves every stored ClusterUpdate that is not finished one
// step forward (pkg/rollout decides what; this does it) and reports whether
// one waits on something a later pass must look at again. Every move is
// committed through raft before the next, so a new leader resumes from the
// exact step.
func (o *Orchestrator) rollUpdates(ctx context.Context) bool {
	again := false
	for _, obj := range o.cfg.Node.State().List(api.KindClusterUpdate) {
		var u api.ClusterUpdate
		if err := json.Unmarshal(obj.Data, &u); err != nil {
			o.log.Warn("decode cluster update", "update", obj.Name, "err", err)
			continue
		}
		switch u.Status.Phase {
		case rollout.PhaseDone, rollout.PhaseFailed:
			continue
		}
		wait, err := o.rollOne(ctx, obj, &u)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			o.log.Warn("roll cluster update", "update", u.Metadata.Name, "err", err)
			wait = true
		}
		again = again || wait
	}
	return again
}

// roller is one pass over one rollout: a ClusterUpdate (u, its object
// obj), or the spec rollout of one cluster (spec).
type roller struct {
	o *Orchestrator
	// kind and name say what rolls, for logs and messages.
	kind, name string
	obj        store.Object
	u          *api.ClusterUpdate
	spec       *clusterObj
	now        time.Time
	// clusters are the stored clusters by name, with their objects.
	clusters map[string]*clusterObj
}

// Kinds of rollout a roller drives.
const (
	rollUpdate = "cluster update"
	rollSpec   = "spec rollout"
)

// logKey is the log attribute that names the rollout.
func (r *roller) logKey() string {
	if r.spec != nil {
		return "spec"
	}
	return "update"
}

// forwardMover moves step s forward: the update's release, or the
// cluster's pending spec.
func (r *roller) forwardMover(st api.UpdateStatus, s api.UpdateStep) mover {
	if r.spec != nil {
		return specMover{r: r, step: s.Scope}
	}
	return pinMover{r: r, step: s.Scope, want: func(*api.KubernetesCluster) string { return st.ToVersion }}
}

// pausedMessage is the Rollout condition's message when step i failed.
func (r *roller) pausedMessage(i int, reason string) string {
	if r.spec != nil {
		return fmt.Sprintf("%s paused: step %d failed: %s (apply a corrected spec to go on)", r.name, i+1, reason)
	}
	return fmt.Sprintf("ClusterUpdate %s paused: step %d failed: %s (kctl update resume|rollback %s)", r.name, i+1, reason, r.name)
}

// clusterObj is a decoded stored cluster.
type clusterObj struct {
	obj store.Object
	c   *api.KubernetesCluster
}

// rollOne performs the next action of one update.
func (o *Orchestrator) rollOne(ctx context.Context, obj store.Object, u *api.ClusterUpdate) (bool, error) {
	r := &roller{o: o, kind: rollUpdate, name: u.Metadata.Name, obj: obj, u: u, now: o.cfg.Now(), clusters: map[string]*clusterObj{}}
	if err := r.loadClusters(); err != nil {
		return false, err
	}
	p, st := r.plan()
	act := rollout.Next(st, p)
	switch act.Kind {
	case rollout.ActWaitApproval, rollout.ActBlocked:
		msg := act.Message
		if act.Kind == rollout.ActBlocked {
			msg = blockedMessage(p)
		}
		if st.Message != msg || !sameSteps(st, u.Status) {
			st.Message = msg
			return false, r.commit(ctx, st, nil)
		}
		return false, nil
	case rollout.ActStart:
		return r.start(ctx, st, act.Step)
	case rollout.ActWait:
		return r.forward(ctx, st, act.Step)
	case rollout.ActRevert:
		return r.revert(ctx, st, act.Step)
	case rollout.ActRolledBack:
		st.Phase, st.Message = rollout.PhaseFailed, "rolled back: no step had run"
		return false, r.commit(ctx, st, r.clearRolloutConds())
	case rollout.ActDone:
		return false, r.finish(ctx, st)
	case rollout.ActPaused, rollout.ActFailed:
		return false, nil
	default:
		return false, fmt.Errorf("update %s: %s", u.Metadata.Name, act.Message)
	}
}

// plan is the rollout plan Next reads and the status to move from. Before
// any step ran the plan is computed from the stored clusters and nodes (so
// blocking issues hold a rollout back) and the status's steps follow it;
// once a step ran the steps are frozen in the status and only their count
// matters.
func (r *roller) plan() (*rollout.RolloutPlan, api.UpdateStatus) {
	st := r.u.Status
	st.Steps = slices.Clone(st.Steps)
	if started(st) {
		return &rollout.RolloutPlan{Name: r.u.Metadata.Name, Steps: make([]rollout.Step, len(st.Steps))}, st
	}
	var cs []*api.KubernetesCluster
	for _, name := range r.clusterNames() {
		cs = append(cs, r.clusters[name].c)
	}
	var nodes []*api.Node
	for _, obj := range r.o.cfg.Node.State().List(api.KindNode) {
		var n api.Node
		if json.Unmarshal(obj.Data, &n) != nil {
			continue
		}
		if n.Metadata.Name == "" {
			n.Metadata.Name = obj.Name
		}
		// Heartbeats live in the leader's memory, not in the store.
		if seen, ok := r.o.lastSeen(n.Metadata.Name); ok {
			n.Status.Ready = r.now.Sub(seen) <= r.o.cfg.HeartbeatTimeout
			n.Status.LastHeartbeat = seen.UTC().Format(time.RFC3339)
		} else if r.o.cfg.LastSeen != nil {
			n.Status.Ready = false
		}
		nodes = append(nodes, &n)
	}
	u := *r.u
	u.Default()
	ctrls := apiv1.ControllerReplicas(r.o.cfg.Node.State().List(apiv1.KindMember))
	p := rollout.Plan(rollout.Input{Update: &u, Clusters: cs, Nodes: nodes, Controllers: ctrls})
	init := rollout.InitialStatus(p)
	st.Steps, st.ToVersion = init.Steps, init.ToVersion
	if st.Phase == "" {
		st.Phase = init.Phase
	}
	return p, st
}

// started reports whether a step of st ever ran.
func started(st api.UpdateStatus) bool {
	for _, s := range st.Steps {
		if s.State != "" && s.State != rollout.StepPending {
			return true
		}
	}
	return false
}

// sameSteps reports whether a and b list the same steps.
func sameSteps(a, b api.UpdateStatus) bool {
	if len(a.Steps) != len(b.Steps) || a.ToVersion != b.ToVersion {
		return false
	}
	for i := range a.Steps {
		x, y := a.Steps[i], b.Steps[i]
		if !slices.Equal(x.Nodes, y.Nodes) || x.Scope != y.Scope || !slices.Equal(x.SnapshotBefore, y.SnapshotBefore) {
			return false
		}
	}
	return true
}

func blockedMessage(p *rollout.RolloutPlan) string {
	parts := make([]string, 0, len(p.Blocking))
	for _, b := range p.Blocking {
		parts = append(parts, b.Code+": "+b.Message)
	}
	return "blocked: " + strings.Join(parts, "; ")
}

func (r *roller) loadClusters() error {
	for _, obj := range r.o.cfg.Node.State().List(api.KindKubernetesCluster) {
		var c api.KubernetesCluster
		if err := json.Unmarshal(obj.Data, &c); err != nil {
			return fmt.Errorf("decode cluster %s: %w", obj.Name, err)
		}
		r.clusters[obj.Name] = &clusterObj{obj: obj, c: &c}
	}
	return nil
}

func (r *roller) clusterNames() []string {
	names := make([]string, 0, len(r.clusters))
	for n := range r.clusters {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// memberClusters are the stored clusters node id belongs to, by name.
func (r *roller) memberClusters(id string) []*clusterObj {
	var out []*clusterObj
	for _, name := range r.clusterNames() {
		co := r.clusters[name]
		if slices.ContainsFunc(co.c.Spec.Members(), func(m api.ClusterNode) bool { return m.NodeID == id }) {
			out = append(out, co)
		}
	}
	return out
}

// stamp is the roller's clock in RFC 3339.
func (r *roller) stamp() string { return r.now.UTC().Format(time.RFC3339) }

// commit stores st and the changed clusters in one CAS batch: nothing is
// written when the update would not change either.
func (r *roller) commit(ctx context.Context, st api.UpdateStatus, changed []*clusterObj) error {
	if r.spec != nil {
		return r.commitSpec(ctx, st)
	}
	var ops []store.Op
	if !statusEqual(st, r.u.Status) {
		nu := *r.u
		nu.Status = st
		data, err := json.Marshal(&nu)
		if err != nil {
			return fmt.Errorf("encode update %s: %w", r.u.Metadata.Name, err)
		}
		ops = append(ops, store.Op{Put: &store.Put{
			Kind: api.KindClusterUpdate, Name: r.obj.Name, Data: data, ExpectModifyIndex: store.Expect(r.obj.ModifyIndex),
		}})
		if st.Phase != r.u.Status.Phase {
			r.o.log.Info("cluster update phase", "update", r.u.Metadata.Name, "from", r.u.Status.Phase, "to", st.Phase, "message", st.Message)
		}
	}
	for i, co := range changed {
		if slices.Contains(changed[:i], co) {
			continue
		}
		data, err := json.Marshal(co.c)
		if err != nil {
			return fmt.Errorf("encode cluster %s: %w", co.obj.Name, err)
		}
		ops = append(ops, store.Op{Put: &store.Put{
			Kind: api.KindKubernetesCluster, Name: co.obj.Name, Data: data, ExpectModifyIndex: store.Expect(co.obj.ModifyIndex),
		}})
	}
	return r.o.apply(ctx, ops, r.now)
}

func statusEqual(a, b api.UpdateStatus) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// start marks step i running; the next pass executes it. A step starts
// only while every cluster of its nodes is ready: a scale, an etcd restore
// or a failure between two steps holds the rollout until it is over.
func (r *roller) start(ctx context.Context, st api.UpdateStatus, i int) (bool, error) {
	for _, id := range st.Steps[i].Nodes {
		for _, co := range r.memberClusters(id) {
			if ro := co.c.Status.SpecRollout; r.u != nil && ro != nil && ro.Phase != api.SpecRolloutDone {
				return true, r.waitToStart(ctx, st, i, fmt.Sprintf("the spec rollout of cluster %s (generation %d)", co.c.Metadata.Name, ro.Generation))
			}
			if ph := co.c.Status.Phase; ph != api.PhaseReady {
				msg := fmt.Sprintf("step %d waits for cluster %s to be ready (phase %s)", i+1, co.c.Metadata.Name, ph)
				if st.Message == msg {
					return true, nil
				}
				st.Message = msg
				return true, r.commit(ctx, st, nil)
			}
		}
	}
	if st.FromVersion == "" && r.u != nil {
		for _, id := range st.Steps[i].Nodes {
			for _, co := range r.memberClusters(id) {
				if v := co.c.Status.KubernetesVersion; v != "" && st.FromVersion == "" {
					st.FromVersion = v
				}
			}
		}
	}
	// A note left while waiting (approval, a blocking issue) is done with.
	st.Message = ""
	next, err := rollout.MarkRunning(st, i, r.stamp())
	if err != nil {
		return false, err
	}
	r.o.log.Info(r.kind+" step starts", r.logKey(), r.name, "step", i+1, "nodes", st.Steps[i].Nodes, "scope", st.Steps[i].Scope)
	return true, r.commit(ctx, next, nil)
}

// finish records the update's release as a target cluster's once every
// member runs it, and drops what pins then say nothing more (a partial
// update keeps the pins of the nodes it moved).
func (r *roller) finish(ctx context.Context, st api.UpdateStatus) error {
	if r.spec != nil {
		return r.finishSpec(ctx, st)
	}
	var changed []*clusterObj
	for _, co := range r.targetClusters(st) {
		moved := settleRelease(co.c, st.ToVersion)
		if dropRolloutCond(co.c) || moved {
			changed = append(changed, co)
		}
	}
	st.Phase = rollout.PhaseDone
	if st.Message == "" && st.ToVersion != "" {
		st.Message = "every node runs " + st.ToVersion
	}
	return r.commit(ctx, st, changed)
}

// settleRelease records release to as c's own once every component of
// every member runs it (a partial update leaves the cluster's release
// alone), then drops the pin fields that name c's own release; it reports
// whether c changed.
func settleRelease(c *api.KubernetesCluster, to string) bool {
	changed := false
	if to != "" && c.Status.KubernetesVersion != to && allRun(c, to) {
		c.Status.KubernetesVersion = to
		changed = true
	}
	for id, pin := range c.Status.Pins {
		if pin.ControlPlane == c.Status.KubernetesVersion {
			pin.ControlPlane = ""
		}
		if pin.Kubelet == c.Status.KubernetesVersion {
			pin.Kubelet = ""
		}
		if storePin(c, id, pin) {
			changed = true
		}
	}
	return changed
}

// allRun reports whether every component of every member of c runs v.
func allRun(c *api.KubernetesCluster, v string) bool {
	for _, m := range c.Spec.Members() {
		if c.Status.Release(m.NodeID, false) != v || c.Spec.IsControlPlane(m.NodeID) && c.Status.Release(m.NodeID, true) != v {
			return false
		}
	}
	return true
}

// targetClusters are the clusters any step's node belongs to.
func (r *roller) targetClusters(st api.UpdateStatus) []*clusterObj {
	var out []*clusterObj
	for _, s := range st.Steps {
		for _, id := range s.Nodes {
			for _, co := range r.memberClusters(id) {
				if !slices.Contains(out, co) {
					out = append(out, co)
				}
			}
		}
	}
	return out
}

// clearRolloutConds drops CondRollout from every target cluster and
// returns the clusters it changed.
func (r *roller) clearRolloutConds() []*clusterObj {
	if r.spec != nil {
		if dropRolloutCond(r.spec.c) {
			return []*clusterObj{r.spec}
		}
		return nil
	}
	var out []*clusterObj
	for _, co := range r.targetClusters(r.u.Status) {
		if dropRolloutCond(co.c) {
			out = append(out, co)
		}
	}
	return out
}

func dropRolloutCond(c *api.KubernetesCluster) bool {
	if findCondition(c.Status.Conditions, CondRollout) == nil {
		return false
	}
	c.Status.Conditions = dropCondition(slices.Clone(c.Status.Conditions), CondRollout)
	return true
}
