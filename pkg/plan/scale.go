package plan

import (
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
)

// planScale plans a membership change: control planes join one at a time
// (etcd learner, then promoted), workers join, then removed nodes are drained
// and removed, control planes after their etcd member. Every step carries the
// projected quorum and any step that would lose it is blocked.
func (b *builder) planScale(j job) ClusterPlan {
	st, req := j.stored, j.scale
	next := prepared(st)
	for i, id := range req.Remove {
		if !isMember(st, id) {
			b.block(CodeNotAMember, fmt.Sprintf("remove[%d]", i), id,
				fmt.Sprintf("check the members with `kctl kubernetes get %s`", j.name),
				"%s is not a member of cluster %s", id, j.name)
		}
	}
	b.checkReplace(j)
	gone := slices.Concat(req.Remove, replacedIDs(req.Replace))
	drop := func(n api.ClusterNode) bool { return slices.Contains(req.Remove, n.NodeID) }
	swapControlPlanes(next, req.Replace)
	next.Spec.ControlPlaneNodes = slices.DeleteFunc(next.Spec.ControlPlaneNodes, drop)
	next.Spec.WorkerNodes = slices.DeleteFunc(next.Spec.WorkerNodes, drop)
	next.Spec.LocalProvisioner.Volumes = slices.DeleteFunc(next.Spec.LocalProvisioner.Volumes, func(v api.VolumeSpec) bool {
		return slices.Contains(gone, v.NodeID)
	})
	next.Spec.ControlPlaneNodes = append(next.Spec.ControlPlaneNodes, req.AddControlPlanes...)
	next.Spec.WorkerNodes = append(next.Spec.WorkerNodes, req.AddWorkers...)
	next.Default()

	added := slices.Concat(memberIDs(req.AddControlPlanes), memberIDs(req.AddWorkers), replacementIDs(req.Replace))
	b.validate(next)
	b.busy(j)
	b.checkMembers(next, contains(added))
	b.checkCilium(next, st)
	etcdChange := len(req.AddControlPlanes) > 0 || len(req.Replace) > 0 || slices.ContainsFunc(st.Spec.ControlPlaneNodes, drop)
	if etcdChange {
		b.checkTopology(next)
	}
	b.checkFsync(next, contains(slices.Concat(memberIDs(req.AddControlPlanes), replacementIDs(req.Replace))))

	s := &stepper{etcd: newEtcdState(memberIDs(st.Spec.ControlPlaneNodes), b.env.ready), replace: len(req.Replace) > 0}
	for _, m := range b.env.status[j.name].EtcdStaleMembers {
		if m.Reason == api.StaleNotInManifest {
			// Counted as a voter that does not answer until its removal step.
			s.etcd.add(staleKey+m.Name, false)
		}
	}
	if etcdChange && !s.etcd.hasQuorum() {
		b.block(CodeQuorumLoss, "spec.controlPlaneNodes", "",
			"bring the not-ready control planes back first; etcd cannot change membership without quorum",
			"etcd has no quorum now (%s): no member can be added or removed", s.etcd)
	}
	// Remove not-ready control planes first: that raises the healthy share.
	notReadyFirst := func(ids []string) []string {
		out := slices.Clone(ids)
		slices.SortStableFunc(out, func(x, y string) int { return boolInt(b.env.ready(x)) - boolInt(b.env.ready(y)) })
		return out
	}
	status := b.place(next, st, b.env.status[j.name])
	b.checkSharing(next, status)
	b.staleMembers(j, s)
	b.updateSteps(s, j, next, status, notReadyFirst)
	return ClusterPlan{Name: j.name, Action: ActionUpdate, Diff: fieldChanges(diffClusters(st, next)), Steps: s.steps, Desired: next, Slot: status.Slot, Shared: status.Shared}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scaleOf recognizes a manifest edit that only changes membership: members
// added (control planes and workers) and removed, nothing else. It returns
// the scale request that gives exactly desired from stored, so the edit is
// planned, ordered and stored as that scale (`kctl kubernetes scale`), or
// nil for any other change. A node that changes role, or a volume added
// with a new node, is not a plain scale.
func scaleOf(stored, desired *api.KubernetesCluster) *ScaleRequest {
	if stored == nil || desired == nil {
		return nil
	}
	req := &ScaleRequest{Cluster: stored.Metadata.Name}
	for _, m := range stored.Spec.Members() {
		if !isMember(desired, m.NodeID) {
			req.Remove = append(req.Remove, m.NodeID)
		}
	}
	for _, m := range desired.Spec.ControlPlaneNodes {
		if !isMember(stored, m.NodeID) {
			req.AddControlPlanes = append(req.AddControlPlanes, m)
		}
	}
	for _, m := range desired.Spec.WorkerNodes {
		if !isMember(stored, m.NodeID) {
			req.AddWorkers = append(req.AddWorkers, m)
		}
	}
	if len(req.Remove)+len(req.AddControlPlanes)+len(req.AddWorkers) == 0 {
		return nil
	}
	next := prepared(stored)
	drop := func(n api.ClusterNode) bool { return slices.Contains(req.Remove, n.NodeID) }
	next.Spec.ControlPlaneNodes = append(slices.DeleteFunc(next.Spec.ControlPlaneNodes, drop), req.AddControlPlanes...)
	next.Spec.WorkerNodes = append(slices.DeleteFunc(next.Spec.WorkerNodes, drop), req.AddWorkers...)
	next.Spec.LocalProvisioner.Volumes = slices.DeleteFunc(next.Spec.LocalProvisioner.Volumes, func(v api.VolumeSpec) bool {
		return slices.Contains(req.Remove, v.NodeID)
	})
	next.Default()
	if len(diffClusters(next, desired)) != 0 {
		return nil
	}
	return req
}
