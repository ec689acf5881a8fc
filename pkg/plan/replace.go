package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Replacing a control plane (`kctl kubernetes replace`, or a manifest that
// swaps one control plane's id and address for another's) is a scale plan
// in a fixed order: the old member leaves etcd first, while the members
// that stay are a quorum of the current membership; the new machine joins
// as a learner (it does not vote, so the quorum does not change) and is
// promoted; the staying control planes' keepalived reloads the new unicast
// peers (the VIP stays held); the old Node object is deleted last.

// checkReplace blocks replacements of nodes that are not control planes of
// the stored cluster, and a request that names one node twice.
func (b *builder) checkReplace(j job) {
	seen := map[string]bool{}
	for i, r := range j.scale.Replace {
		p := fmt.Sprintf("replace[%d]", i)
		switch {
		case !slices.Contains(memberIDs(j.stored.Spec.ControlPlaneNodes), r.Node):
			b.block(CodeNotAMember, p+".node", r.Node,
				fmt.Sprintf("replace names a control plane of %s (`kctl kubernetes get %s`); a worker is removed with `kctl kubernetes scale %s --remove %s`", j.name, j.name, j.name, r.Node),
				"%s is not a control plane of cluster %s", r.Node, j.name)
		case seen[r.Node] || slices.Contains(j.scale.Remove, r.Node):
			b.block(CodeConflictingRequest, p+".node", r.Node, "name each control plane once",
				"%s is replaced or removed twice in one request", r.Node)
		}
		seen[r.Node] = true
	}
}

// swapControlPlanes puts each replacement where its old control plane was,
// so the order of controlPlaneNodes (and so priorities and the bootstrap
// entry) stays as it was.
func swapControlPlanes(c *api.KubernetesCluster, rs []Replacement) {
	for _, r := range rs {
		for i, m := range c.Spec.ControlPlaneNodes {
			if m.NodeID == r.Node {
				c.Spec.ControlPlaneNodes[i] = r.With
			}
		}
	}
}

func replacedIDs(rs []Replacement) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Node)
	}
	return out
}

func replacementIDs(rs []Replacement) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.With.NodeID)
	}
	return out
}

// replacementsOf recognizes a manifest edit that only replaces control
// planes: the workers are the same, as many control planes leave as join,
// and swapping them in the stored cluster (pairing them in manifest order)
// gives exactly desired. It returns nil for any other change.
func replacementsOf(stored, desired *api.KubernetesCluster) []Replacement {
	if stored == nil || desired == nil || len(stored.Spec.ControlPlaneNodes) != len(desired.Spec.ControlPlaneNodes) {
		return nil
	}
	var rs []Replacement
	for i, m := range stored.Spec.ControlPlaneNodes {
		if isMember(desired, m.NodeID) {
			continue
		}
		w := desired.Spec.ControlPlaneNodes[i]
		if isMember(stored, w.NodeID) {
			return nil
		}
		rs = append(rs, Replacement{Node: m.NodeID, With: w})
	}
	if len(rs) == 0 {
		return nil
	}
	next := prepared(stored)
	swapControlPlanes(next, rs)
	next.Spec.LocalProvisioner.Volumes = slices.DeleteFunc(next.Spec.LocalProvisioner.Volumes, func(v api.VolumeSpec) bool {
		return slices.Contains(replacedIDs(rs), v.NodeID)
	})
	next.Default()
	if len(diffClusters(next, desired)) != 0 {
		return nil
	}
	return rs
}

// leavesFirst moves the control planes a replacement removes ahead of the
// nodes that join, keeping each group's order: the dead member leaves etcd
// before its successor is added.
func leavesFirst(pcs []plannedChange) []plannedChange {
	out := make([]plannedChange, 0, len(pcs))
	for _, pc := range pcs {
		if pc.Membership == MembershipLeave {
			out = append(out, pc)
		}
	}
	for _, pc := range pcs {
		if pc.Membership != MembershipLeave {
			out = append(out, pc)
		}
	}
	return out
}

// promote projects a learner's promotion to a voting member, blocking it
// when the new member would leave etcd without quorum (a learner that is
// not ready would be a voter that does not answer).
func (b *builder) promote(s *stepper, id string) {
	had := s.etcd.hasQuorum()
	s.etcd.add(id, b.env.ready(id))
	if had && !s.etcd.hasQuorum() {
		b.block(CodeQuorumLoss, "spec.controlPlaneNodes", id,
			"make sure the new node is registered and ready before it joins",
			"promoting %s to a voting etcd member leaves %s", id, s.etcd)
	}
	s.add(id, ComponentEtcd, StepPromoteMember, DisruptionEtcdMembership,
		fmt.Sprintf("promote learner %s to a voting etcd member once it has caught up (etcd refuses earlier; the orchestrator retries)", id))
}

// staleMembers warns about what the last health check found in etcd's
// membership that the stored manifest does not account for, and in a
// scale plan (add, remove or replace) projects and lists the removal of
// each member no control plane has: the orchestrator removes those first,
// and until then they count against the quorum as members that do not
// answer.
func (b *builder) staleMembers(j job, s *stepper) {
	name := j.name
	for _, m := range b.env.status[name].EtcdStaleMembers {
		switch m.Reason {
		case api.StaleNotInManifest:
			id := m.Name
			if id == "" && len(m.PeerURLs) > 0 {
				id = m.PeerURLs[0]
			}
			b.warn(CodeEtcdStaleMember, "status.etcdStaleMembers", id,
				fmt.Sprintf("any `kctl kubernetes scale %s` or `kctl kubernetes replace %s` plan removes it first", name, name),
				"etcd member %s (%s) is no control plane of %s: it counts against the quorum without answering", id, strings.Join(m.PeerURLs, ", "), name)
			if s != nil {
				s.etcd.add(staleKey+id, false)
				s.etcd.remove(staleKey + id)
				s.add(id, ComponentEtcd, StepRemoveMember, DisruptionEtcdMembership,
					fmt.Sprintf("remove the stale etcd member %s, which no control plane of the manifest has", id))
			}
		case api.StaleNeverJoined:
			b.warn(CodeEtcdStaleMember, "status.etcdStaleMembers", m.Name,
				fmt.Sprintf("`kctl kubernetes replace %s --node %s --with ID:ADDR` for a machine that is gone, or `kctl kubernetes scale %s --remove %s`", name, m.Name, name, m.Name),
				"control plane %s of %s has no etcd member: it never joined", m.Name, name)
		}
	}
}

// staleKey prefixes a stale member in the projected etcd membership, so it
// never matches a node id.
const staleKey = "stale:"
