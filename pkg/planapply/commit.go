package planapply

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// Commit applies the plan the caller reviewed: it checks it against v
// (Check, rendering with opts) and returns the ops of one atomic batch with
// the answer to send once they are committed (its Index left for the
// caller to set). A plan without changes has no ops. now stamps the
// conditions a delete records.
func Commit(v *View, req apiv1.ApplyRequest, opts render.Options, now time.Time) ([]store.Op, apiv1.ApplyResponse, error) {
	resp, err := Check(v, req, opts)
	if err != nil {
		return nil, apiv1.ApplyResponse{}, err
	}
	out := apiv1.ApplyResponse{Hash: resp.Hash, Clusters: map[string]string{}}
	if !resp.Changes() {
		return nil, out, nil
	}
	ops, err := commitOps(v, req.Request, resp, now, &out)
	if err != nil {
		return nil, apiv1.ApplyResponse{}, err
	}
	return ops, out, nil
}

// commitOps builds the batch of an apply: one CAS put per created, updated
// or deleted cluster (deletes set the phase deleting; the orchestrator
// removes the object when the teardown is done) and per ClusterUpdate.
func commitOps(v *View, req apiv1.PlanRequest, resp *apiv1.PlanResponse, at time.Time, out *apiv1.ApplyResponse) ([]store.Op, error) {
	now := at.UTC().Format(time.RFC3339)
	var ops []store.Op
	for _, cp := range resp.Plan.Clusters {
		if cp.Action == plan.ActionNoOp {
			continue
		}
		cur, exists := v.Clusters[cp.Name]
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
			next.Metadata.Annotations = nil
			next.Metadata.Generation = 1
			next.Status = api.ClusterStatus{Phase: api.PhaseBootstrapping}
		case plan.ActionDelete:
			next = old
			next.Status.Phase = api.PhaseDeleting
			if old.Status.Phase == api.PhaseDeleting {
				// --force added to a delete in progress: the options
				// asked for before stay.
				next.Status.Conditions = escalateConditions(old.Status.Conditions, req, now)
			} else {
				next.Status.Conditions = deleteConditions(old.Status.Conditions, req, now)
			}
		default:
			next = *cp.Desired
			next.Metadata.Generation = old.Metadata.Generation + 1
			next.Metadata.CreatedAt = old.Metadata.CreatedAt
			next.Metadata.Annotations = old.Metadata.Annotations
			next.Status = old.Status
			next.Status.Phase = api.PhaseUpdating
			if (req.Scale != nil && req.Scale.Cluster == cp.Name) || membersChange(&old, &next) {
				// A manifest that replaces a control plane changes etcd
				// membership as a scale does: the orchestrator does that
				// only while the cluster is scaling.
				next.Status.Phase = api.PhaseScaling
			}
		}
		if cp.Action != plan.ActionDelete {
			// Where the plan placed the cluster among those sharing its
			// machines: fixed at create, so a later cluster never takes
			// the primary slot from it.
			next.Status.Slot, next.Status.Shared = cp.Slot, cp.Shared
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
		if u.Action == apiv1.UpdateDelete {
			ops = append(ops, deleteUpdateOp(v.Updates[u.Name]))
			out.DeletedUpdates = append(out.DeletedUpdates, u.Name)
			continue
		}
		cur := v.Updates[u.Name]
		next := *u.Desired
		next.Status = rollout.InitialStatus(u.Rollout)
		next.Metadata.Generation = 1
		next.Metadata.Annotations = nil
		if u.Action == apiv1.UpdateUpdate {
			var old api.ClusterUpdate
			if err := json.Unmarshal(cur.Data, &old); err != nil {
				return nil, fmt.Errorf("decode stored update %s: %w", u.Name, err)
			}
			next.Metadata.Generation = old.Metadata.Generation + 1
			next.Metadata.Annotations = old.Metadata.Annotations
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

// escalateConditions adds --force to the conditions of a cluster already
// being deleted, keeping every option it was deleted with.
func escalateConditions(old []api.Condition, req apiv1.PlanRequest, now string) []api.Condition {
	out := slices.Clone(old)
	if req.Force {
		out = slices.DeleteFunc(out, func(c api.Condition) bool { return c.Type == api.ConditionForceDelete })
		out = append(out, api.Condition{Type: api.ConditionForceDelete, Status: "True", Reason: "Requested", Message: "tear down even where nodes do not answer", Since: now})
	}
	return out
}

// deleteConditions adds the delete options to a cluster's conditions.
func deleteConditions(old []api.Condition, req apiv1.PlanRequest, now string) []api.Condition {
	out := slices.DeleteFunc(slices.Clone(old), func(c api.Condition) bool {
		return c.Type == api.ConditionForceDelete || c.Type == api.ConditionPurgeVolumes
	})
	if req.Force {
		out = append(out, api.Condition{Type: api.ConditionForceDelete, Status: "True", Reason: "Requested", Message: "tear down even where nodes do not answer", Since: now})
	}
	if req.PurgeVolumes {
		out = append(out, api.Condition{Type: api.ConditionPurgeVolumes, Status: "True", Reason: "Requested", Message: "remove the volumes kcore created, with their data", Since: now})
	}
	return out
}

// membersChange reports whether next has members old has not, or lacks
// some it has.
func membersChange(old, next *api.KubernetesCluster) bool {
	ids := func(c *api.KubernetesCluster) []string {
		var out []string
		for _, m := range c.Spec.Members() {
			out = append(out, m.NodeID)
		}
		slices.Sort(out)
		return out
	}
	return !slices.Equal(ids(old), ids(next))
}
