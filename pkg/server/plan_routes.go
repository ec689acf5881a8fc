package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// Condition types apply records on a cluster being deleted, for the orchestrator.
const (
	// ConditionForceDelete: tear down even where nodes do not answer.
	ConditionForceDelete = "ForceDelete"
	// ConditionPurgeVolumes: also remove the volumes kcore created, with their data.
	ConditionPurgeVolumes = "PurgeVolumes"
)

// view is the stored state a plan is computed against, read at one index.
type view struct {
	index    uint64
	clusters map[string]store.Object
	updates  map[string]store.Object
	stored   []*api.KubernetesCluster
	nodes    []*api.Node
	// nodeIndex is each Node object's modify index: a node that reported
	// new facts after a plan may render differently.
	nodeIndex map[string]uint64
}

// readView reads clusters, updates and nodes at one store index: it reads
// again when a command was applied while it read.
func (s *Server) readView() (*view, error) {
	st := s.backend.State()
	for {
		before := st.LastIndex()
		v := &view{index: before, clusters: map[string]store.Object{}, updates: map[string]store.Object{}, nodeIndex: map[string]uint64{}}
		for _, o := range st.List(api.KindKubernetesCluster) {
			var c api.KubernetesCluster
			if err := json.Unmarshal(o.Data, &c); err != nil {
				return nil, fmt.Errorf("decode stored cluster %s: %w", o.Name, err)
			}
			v.clusters[o.Name] = o
			v.stored = append(v.stored, &c)
		}
		for _, o := range st.List(api.KindClusterUpdate) {
			v.updates[o.Name] = o
		}
		for _, o := range st.List(api.KindNode) {
			var n api.Node
			if err := json.Unmarshal(o.Data, &n); err != nil {
				return nil, fmt.Errorf("decode stored node %s: %w", o.Name, err)
			}
			if n.Metadata.Name == "" {
				n.Metadata.Name = o.Name
			}
			v.nodeIndex[n.Metadata.Name] = o.ModifyIndex
			if ready, last, ok := s.liveness(n.Metadata.Name); ok {
				n.Status.Ready, n.Status.LastHeartbeat = ready, last
			}
			v.nodes = append(v.nodes, &n)
		}
		if st.LastIndex() == before {
			return v, nil
		}
	}
}

// renderOptioner is a Backend that knows the orchestrator's render options
// (the controller's does); plans render with them. Without it plans render
// with the defaults.
type renderOptioner interface {
	RenderOptions() render.Options
}

// renderOptions are the options plans render with.
func (s *Server) renderOptions() render.Options {
	if ro, ok := s.backend.(renderOptioner); ok {
		return ro.RenderOptions()
	}
	return render.Options{}
}

// compute plans req against v as if at index, rendering with opts.
func compute(v *view, req apiv1.PlanRequest, index uint64, opts render.Options) (*apiv1.PlanResponse, error) {
	desired := make([]*api.KubernetesCluster, len(req.Clusters))
	for i := range req.Clusters {
		desired[i] = &req.Clusters[i]
	}
	p := plan.Compute(plan.Input{
		Desired: desired, Stored: v.stored, Nodes: v.nodes, Index: index,
		Prune: req.Prune, Scale: req.Scale, Delete: req.Delete, Recreate: req.Recreate,
		Render: opts,
	})
	updates, err := planUpdates(p, v, req.Updates)
	if err != nil {
		return nil, err
	}
	return &apiv1.PlanResponse{Plan: p, Updates: updates, Hash: apiv1.CombinedHash(p, updates, req)}, nil
}

// planPost answers POST /v1/plan at the leader-confirmed current index.
func (s *Server) planPost(c *call) (any, error) {
	var req apiv1.PlanRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	v, err := s.readView()
	if err != nil {
		return nil, err
	}
	resp, err := compute(v, req, v.index, s.renderOptions())
	if err != nil {
		return nil, err
	}
	if err := mayApply(c.role(), req); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			resp.Forbidden = ae.body.Message
		}
	}
	return resp, nil
}

// applyPost answers POST /v1/apply: it recomputes the plan the caller
// reviewed, refuses it when anything it depends on changed or when it is
// blocked, and commits every change in one atomic batch with CAS on each
// touched object.
func (s *Server) applyPost(c *call) (any, error) {
	var req apiv1.ApplyRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	c.planHash = req.Hash
	c.object = applyObject(req.Request)
	if err := mayApply(c.role(), req.Request); err != nil {
		return nil, err
	}
	if len(req.Request.Recreate) > 0 {
		// The orchestrator cannot yet tear a cluster down and bootstrap it
		// again in one go; plan shows what a replace would do.
		return nil, badRequest("replace is planned but not applied yet: delete the cluster (kctl kubernetes delete %s --wait), then apply its manifest", req.Request.Recreate[0])
	}
	v, err := s.readView()
	if err != nil {
		return nil, err
	}
	if req.Index > v.index {
		return nil, newError(apiv1.CodeStalePlan, "the plan's index %d is ahead of the controller's %d: run plan again", req.Index, v.index)
	}
	resp, err := compute(v, req.Request, req.Index, s.renderOptions())
	if err != nil {
		return nil, err
	}
	if resp.Hash != req.Hash || touchedSince(v, resp, req.Index) {
		return nil, newError(apiv1.CodeStalePlan, "%s: run plan again", staleReason(v, resp, req.Index))
	}
	if resp.Blocked() {
		return nil, blockedError(resp.Plan.Blocking)
	}
	out := apiv1.ApplyResponse{Hash: resp.Hash, Clusters: map[string]string{}}
	if !resp.Changes() {
		c.skipAudit = true
		return out, nil
	}
	ops, err := s.applyOps(v, req.Request, resp, &out)
	if err != nil {
		return nil, err
	}
	idx, err := s.apply(c.r.Context(), store.Batch{Ops: ops})
	if err != nil {
		return nil, err
	}
	out.Index = idx
	return out, nil
}

// applyObject names what an apply touches, for its audit entry.
func applyObject(req apiv1.PlanRequest) string {
	var names []string
	for _, c := range req.Clusters {
		names = append(names, api.KindKubernetesCluster+"/"+c.Metadata.Name)
	}
	for _, n := range req.Delete {
		names = append(names, api.KindKubernetesCluster+"/"+n)
	}
	if req.Scale != nil {
		names = append(names, api.KindKubernetesCluster+"/"+req.Scale.Cluster)
	}
	for _, u := range req.Updates {
		names = append(names, api.KindClusterUpdate+"/"+u.Metadata.Name)
	}
	if req.Prune {
		names = append(names, "prune")
	}
	return strings.Join(names, ",")
}

// mayApply lets cluster-admin apply anything and operator only plans that
// scale or touch only ClusterUpdates.
func mayApply(role string, req apiv1.PlanRequest) error {
	if role == apiv1.RoleClusterAdmin {
		return nil
	}
	clusters := len(req.Clusters) > 0 || len(req.Delete) > 0 || len(req.Recreate) > 0 || req.Prune
	if role == apiv1.RoleOperator && !clusters {
		return nil
	}
	return forbidden("role %q may not apply changes to KubernetesCluster objects; an operator may apply scale plans and ClusterUpdates", role)
}

// touchedSince reports whether an object the plan writes changed after index.
func touchedSince(v *view, resp *apiv1.PlanResponse, index uint64) bool {
	for _, cp := range resp.Plan.Clusters {
		if o, ok := v.clusters[cp.Name]; ok && o.ModifyIndex > index {
			return true
		}
	}
	for _, u := range resp.Updates {
		if o, ok := v.updates[u.Name]; ok && o.ModifyIndex > index {
			return true
		}
	}
	return false
}

// staleReason says why a plan recomputed at apply differs from the one
// reviewed at index: an object it writes changed, or the plan's hash,
// which covers every rendered file, unit, task and volume it changes,
// differs because what would be rendered now is not what was reviewed
// (a member reported new facts, or the controller renders differently).
func staleReason(v *view, resp *apiv1.PlanResponse, index uint64) string {
	var changed, nodes []string
	for _, cp := range resp.Plan.Clusters {
		if o, ok := v.clusters[cp.Name]; ok && o.ModifyIndex > index {
			changed = append(changed, api.KindKubernetesCluster+"/"+cp.Name)
		}
		for _, st := range cp.Steps {
			if v.nodeIndex[st.Node] > index && !slices.Contains(nodes, st.Node) {
				nodes = append(nodes, st.Node)
			}
		}
	}
	for _, u := range resp.Updates {
		if o, ok := v.updates[u.Name]; ok && o.ModifyIndex > index {
			changed = append(changed, api.KindClusterUpdate+"/"+u.Name)
		}
	}
	switch {
	case len(changed) > 0:
		return fmt.Sprintf("%s changed since this plan was made (index %d)", strings.Join(changed, ", "), index)
	case len(nodes) > 0:
		return fmt.Sprintf("what would be rendered now differs from the reviewed plan: %s reported new facts since index %d", strings.Join(nodes, ", "), index)
	}
	return fmt.Sprintf("what would be applied now differs from the reviewed plan (index %d): its steps, the files, units, tasks and volumes they render, its issues or its options changed", index)
}

// blockedError is the 409 plan-blocked answer with the issues in its details.
func blockedError(issues []plan.Issue) error {
	codes := make([]string, 0, len(issues))
	for _, i := range issues {
		codes = append(codes, i.Code)
	}
	e := newError(apiv1.CodePlanBlocked, "the plan is blocked by %d issue(s): %s", len(issues), strings.Join(codes, ", "))
	if b, err := json.Marshal(issues); err == nil {
		e.body.Details = map[string]string{apiv1.DetailIssues: string(b)}
	}
	return e
}

// applyOps builds the batch of an apply: one CAS put per created, updated
// or deleted cluster (deletes set the phase deleting; the orchestrator
// removes the object when the teardown is done) and per ClusterUpdate.
func (s *Server) applyOps(v *view, req apiv1.PlanRequest, resp *apiv1.PlanResponse, out *apiv1.ApplyResponse) ([]store.Op, error) {
	now := s.now().UTC().Format(time.RFC3339)
	var ops []store.Op
	for _, cp := range resp.Plan.Clusters {
		if cp.Action == plan.ActionNoOp {
			continue
		}
		cur, exists := v.clusters[cp.Name]
		var old api.KubernetesCluster
		if exists {
			if err := json.Unmarshal(cur.Data, &old); err != nil {
				return nil, fmt.Errorf("decode stored cluster %s: %w", cp.Name, err)
			}
		}
		var next api.KubernetesCluster
		switch cp.Action {
		case plan.ActionCreate:
			next = *cp.Desired
			next.Metadata.Generation = 1
			next.Status = api.ClusterStatus{Phase: api.PhaseBootstrapping}
		case plan.ActionDelete:
			next = old
			next.Status.Phase = api.PhaseDeleting
			next.Status.Conditions = deleteConditions(old.Status.Conditions, req, now)
		default:
			next = *cp.Desired
			next.Metadata.Generation = old.Metadata.Generation + 1
			next.Metadata.CreatedAt = old.Metadata.CreatedAt
			next.Status = old.Status
			next.Status.Phase = api.PhaseUpdating
			if req.Scale != nil && req.Scale.Cluster == cp.Name {
				next.Status.Phase = api.PhaseScaling
			}
		}
		next.APIVersion, next.Kind = api.APIVersion, api.KindKubernetesCluster
		next.Metadata.Name = cp.Name
		data, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("encode cluster %s: %w", cp.Name, err)
		}
		ops = append(ops, store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: cp.Name, Data: data, ExpectModifyIndex: store.Expect(cur.ModifyIndex)}})
		out.Clusters[cp.Name] = next.Status.Phase
	}
	for _, u := range resp.Updates {
		if u.Action == apiv1.UpdateNoOp {
			continue
		}
		cur := v.updates[u.Name]
		next := *u.Desired
		next.Status = rollout.InitialStatus(u.Rollout)
		next.Metadata.Generation = 1
		if u.Action == apiv1.UpdateUpdate {
			var old api.ClusterUpdate
			if err := json.Unmarshal(cur.Data, &old); err != nil {
				return nil, fmt.Errorf("decode stored update %s: %w", u.Name, err)
			}
			next.Metadata.Generation = old.Metadata.Generation + 1
			if started(old.Status) {
				// A rollout under way keeps its status; the roller decides.
				next.Status = old.Status
			}
		}
		data, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("encode update %s: %w", u.Name, err)
		}
		ops = append(ops, store.Op{Put: &store.Put{Kind: api.KindClusterUpdate, Name: u.Name, Data: data, ExpectModifyIndex: store.Expect(cur.ModifyIndex)}})
		out.Updates = append(out.Updates, u.Name)
	}
	return ops, nil
}

// started reports whether a ClusterUpdate's rollout has begun: a changed
// manifest then keeps the status instead of starting over.
func started(st api.UpdateStatus) bool {
	switch st.Phase {
	case "", rollout.PhasePending, rollout.PhaseApproved:
		return false
	}
	return true
}

// deleteConditions adds the delete options to a cluster's conditions.
func deleteConditions(old []api.Condition, req apiv1.PlanRequest, now string) []api.Condition {
	out := slices.DeleteFunc(slices.Clone(old), func(c api.Condition) bool {
		return c.Type == ConditionForceDelete || c.Type == ConditionPurgeVolumes
	})
	if req.Force {
		out = append(out, api.Condition{Type: ConditionForceDelete, Status: "True", Reason: "Requested", Message: "tear down even where nodes do not answer", Since: now})
	}
	if req.PurgeVolumes {
		out = append(out, api.Condition{Type: ConditionPurgeVolumes, Status: "True", Reason: "Requested", Message: "remove the volumes kcore created, with their data", Since: now})
	}
	return out
}
