package plan

import (
	"fmt"
	"slices"
	"strings"

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
	drop := func(n api.ClusterNode) bool { return slices.Contains(req.Remove, n.NodeID) }
	next.Spec.ControlPlaneNodes = slices.DeleteFunc(next.Spec.ControlPlaneNodes, drop)
	next.Spec.WorkerNodes = slices.DeleteFunc(next.Spec.WorkerNodes, drop)
	next.Spec.LocalProvisioner.Volumes = slices.DeleteFunc(next.Spec.LocalProvisioner.Volumes, func(v api.VolumeSpec) bool {
		return slices.Contains(req.Remove, v.NodeID)
	})
	next.Spec.ControlPlaneNodes = append(next.Spec.ControlPlaneNodes, req.AddControlPlanes...)
	next.Spec.WorkerNodes = append(next.Spec.WorkerNodes, req.AddWorkers...)
	next.Default()

	added := append(memberIDs(req.AddControlPlanes), memberIDs(req.AddWorkers)...)
	b.validate(next)
	b.busy(j)
	b.checkMembers(next, contains(added))
	b.checkCilium(next, st)
	if len(req.AddControlPlanes) > 0 || slices.ContainsFunc(st.Spec.ControlPlaneNodes, drop) {
		b.checkTopology(next)
	}
	b.checkFsync(next, contains(memberIDs(req.AddControlPlanes)))

	s := &stepper{etcd: newEtcdState(memberIDs(st.Spec.ControlPlaneNodes), b.env.ready)}
	etcdChange := len(req.AddControlPlanes) > 0 || slices.ContainsFunc(st.Spec.ControlPlaneNodes, drop)
	if etcdChange && !s.etcd.hasQuorum() {
		b.block(CodeQuorumLoss, "spec.controlPlaneNodes", "",
			"bring the not-ready control planes back first; etcd cannot change membership without quorum",
			"etcd has no quorum now (%s): no member can be added or removed", s.etcd)
	}
	b.scaleAddSteps(s, next, req)
	b.scaleRemoveSteps(s, st, next, req)
	return ClusterPlan{Name: j.name, Action: ActionUpdate, Diff: fieldChanges(diffClusters(st, next)), Steps: s.steps, Desired: next}
}

func (b *builder) scaleAddSteps(s *stepper, next *api.KubernetesCluster, req *ScaleRequest) {
	ha := next.Spec.HighAvailability.Enabled
	port := apiPort(next.Spec.APIServerEndpoint)
	for _, m := range req.AddControlPlanes {
		m := findMember(next, m.NodeID)
		id := m.NodeID
		s.add(id, ComponentCertificates, StepIssue, DisruptionNone,
			fmt.Sprintf("issue etcd peer/server, kube-apiserver (SANs %s), controller-manager, scheduler and kubelet certificates; write /etc/kubernetes/admin.conf", apiSANs(next, m)))
		s.add(id, ComponentFirewall, StepCreate, DisruptionNone, "accept etcd 2379-2380 from the control planes, the API on "+port+" and kubelet 10250")
		had := s.etcd.hasQuorum()
		s.etcd.add(id, b.env.ready(id))
		if had && !s.etcd.hasQuorum() {
			b.block(CodeQuorumLoss, "spec.controlPlaneNodes", id,
				"bring the not-ready control planes back, or make sure the new node is ready, before adding it",
				"adding %s as an etcd member leaves %s", id, s.etcd)
		}
		s.add(id, ComponentEtcd, StepAddMember, DisruptionEtcdMembership,
			fmt.Sprintf("add %s as an etcd learner, start etcd, promote it to a voting member once it has caught up", id))
		s.add(id, ComponentAPIServer, StepStart, DisruptionNone, fmt.Sprintf("serve https://%s:%s against the local etcd member", m.AdvertiseAddress, port))
		s.add(id, ComponentControllerManager, StepStart, DisruptionNone, "")
		s.add(id, ComponentScheduler, StepStart, DisruptionNone, "")
		if ha {
			s.add(id, ComponentKeepalived, StepStart, DisruptionNone, keepalivedDetail(next, m))
		}
		s.add(id, ComponentKubelet, StepStart, DisruptionNone, kubeletDetail(next, m, true))
	}
	for _, m := range req.AddWorkers {
		m := findMember(next, m.NodeID)
		s.add(m.NodeID, ComponentCertificates, StepIssue, DisruptionNone, "issue the kubelet client and serving certificates")
		s.add(m.NodeID, ComponentFirewall, StepCreate, DisruptionNone, "accept kubelet 10250 from the control planes")
		s.add(m.NodeID, ComponentKubelet, StepStart, DisruptionNone, kubeletDetail(next, m, false))
	}
}

func (b *builder) scaleRemoveSteps(s *stepper, st, next *api.KubernetesCluster, req *ScaleRequest) {
	ha := st.Spec.HighAvailability.Enabled
	for _, m := range st.Spec.WorkerNodes {
		if slices.Contains(req.Remove, m.NodeID) {
			s.add(m.NodeID, ComponentKubelet, StepDrain, DisruptionDrain, "cordon and drain "+m.NodeID+"; its pods move to other nodes")
			s.add(m.NodeID, ComponentKubelet, StepStop, DisruptionRestartUnit, "stop kubelet")
			s.add(m.NodeID, ComponentMembership, StepRemove, DisruptionNone, "delete the Node object "+m.NodeID+" from Kubernetes")
			b.hostCleanupSteps(s, st, m.NodeID)
		}
	}
	// Remove not-ready control planes first: that raises the healthy share.
	var cps []int
	for i, m := range st.Spec.ControlPlaneNodes {
		if slices.Contains(req.Remove, m.NodeID) {
			cps = append(cps, i)
		}
	}
	slices.SortStableFunc(cps, func(x, y int) int {
		return boolInt(b.env.ready(st.Spec.ControlPlaneNodes[x].NodeID)) - boolInt(b.env.ready(st.Spec.ControlPlaneNodes[y].NodeID))
	})
	start := len(s.etcd.members)
	need := quorumOf(start)
	for _, i := range cps {
		id := st.Spec.ControlPlaneNodes[i].NodeID
		if b.env.ready(id) {
			s.add(id, ComponentKubelet, StepDrain, DisruptionDrain, "cordon and drain "+id+"; its pods move to other nodes")
		}
		s.etcd.remove(id)
		if s.etcd.healthyCount() < need || !s.etcd.hasQuorum() {
			b.block(CodeQuorumLoss, fmt.Sprintf("spec.controlPlaneNodes[%d]", i), id,
				"keep a majority of the control planes healthy through the change: remove fewer control planes, bring the not-ready ones back first, or add replacements (--add-control-plane) before removing",
				"removing %s leaves %s (%s); the change starts with %d members and must keep %d of them healthy at every step%s",
				id, plural(s.etcd.healthyCount(), "healthy etcd member"), s.etcd, start, need, notReadyNote(b.env, st, id))
		}
		s.add(id, ComponentEtcd, StepRemoveMember, DisruptionEtcdMembership,
			fmt.Sprintf("remove %s from the etcd membership through a healthy member, then stop etcd on %s and remove its data directory", id, id))
		if ha {
			s.add(id, ComponentKeepalived, StepStop, DisruptionVIPMove, "stop keepalived; the VIP moves to a remaining control plane if this node holds it")
		}
		s.add(id, ComponentAPIServer, StepStop, DisruptionRestartUnit, "")
		s.add(id, ComponentControllerManager, StepStop, DisruptionRestartUnit, "")
		s.add(id, ComponentScheduler, StepStop, DisruptionRestartUnit, "")
		s.add(id, ComponentKubelet, StepStop, DisruptionRestartUnit, "stop kubelet")
		s.add(id, ComponentMembership, StepRemove, DisruptionNone, "delete the Node object "+id+" from Kubernetes")
		b.hostCleanupSteps(s, st, id)
	}
	b.scaleFollowUps(s, st, next, req)
}

// scaleFollowUps updates what the remaining members configure from the
// membership: keepalived peers, the add-on units' host, Cilium's devices and
// the provisioner's paths.
func (b *builder) scaleFollowUps(s *stepper, st, next *api.KubernetesCluster, req *ScaleRequest) {
	cpsChanged := len(req.AddControlPlanes) > 0 || slices.ContainsFunc(st.Spec.ControlPlaneNodes, func(n api.ClusterNode) bool { return slices.Contains(req.Remove, n.NodeID) })
	if next.Spec.HighAvailability.Enabled && cpsChanged {
		for _, m := range next.Spec.ControlPlaneNodes {
			if isMember(st, m.NodeID) {
				s.add(m.NodeID, ComponentKeepalived, StepRestart, DisruptionRestartUnit,
					"restart with the new unicast peers: "+keepalivedDetail(next, m)+"; if this node holds the VIP it moves to a peer for about a second")
			}
		}
	}
	boot, oldBoot := firstCP(next), firstCP(st)
	if boot == "" {
		return
	}
	cilium := next.Spec.CNI == api.CNICilium
	switch {
	case cilium && !slices.Equal(ifaces(st), ifaces(next)):
		s.add(boot, ComponentCilium, StepReinstall, DisruptionRestartUnit,
			"`cilium upgrade` with devices "+strings.Join(ifaces(next), ",")+"; agents restart node by node, pod networking pauses briefly on each")
	case cilium && boot != oldBoot:
		s.add(boot, ComponentCilium, StepApply, DisruptionNone, "the kcore-kubernetes-cilium unit moves here from "+oldBoot+"; Cilium is not reinstalled")
	}
	lp := next.Spec.LocalProvisioner
	if lp.Enabled && lp.Mode == api.ProvisionerModeShared && (boot != oldBoot || len(lp.Volumes) != len(st.Spec.LocalProvisioner.Volumes)) {
		s.add(boot, ComponentProvisioner, StepApply, DisruptionNone, provisionerDetail(next))
	}
}

func notReadyNote(e *env, c *api.KubernetesCluster, removing string) string {
	var down []string
	for _, m := range c.Spec.ControlPlaneNodes {
		if m.NodeID != removing && !e.ready(m.NodeID) {
			down = append(down, m.NodeID)
		}
	}
	if len(down) == 0 {
		return ""
	}
	return " (not ready: " + names(down) + ")"
}

func findMember(c *api.KubernetesCluster, id string) api.ClusterNode {
	for _, m := range c.Spec.Members() {
		if m.NodeID == id {
			return m
		}
	}
	return api.ClusterNode{NodeID: id}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
