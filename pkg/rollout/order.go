package rollout

import (
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// steps orders the targets into steps. Control planes always go one at a
// time, sorted by node id with the etcd leader (or the bootstrap node) last;
// workers and standalone nodes, sorted by id, go batch workers per step.
// The order decides which group goes first, and for
// control-plane-components-first the control planes are visited twice:
// their control-plane components, then their kubelets.
func (e *env) steps(targets []*target, order string, batch int) []Step {
	var cps, workers []*target
	for _, t := range targets {
		if t.role == api.RoleControlPlane {
			cps = append(cps, t)
		} else {
			workers = append(workers, t)
		}
	}
	slices.SortStableFunc(cps, func(a, b *target) int {
		if a.last != b.last {
			if a.last {
				return 1
			}
			return -1
		}
		return 0
	})
	one := func(phase, scope string, ts []*target) []Step {
		var out []Step
		for _, t := range ts {
			out = append(out, e.step(phase, scope, []*target{t}))
		}
		return out
	}
	var wk []Step
	for i := 0; i < len(workers); i += batch {
		wk = append(wk, e.step(PhaseWorkers, ScopeNode, workers[i:min(i+batch, len(workers))]))
	}
	var out []Step
	switch order {
	case OrderControlPlaneComponentsFirst:
		out = append(one(PhaseControlPlanes, ScopeControlPlane, cps), one(PhaseKubelets, ScopeKubelet, cps)...)
		out = append(out, wk...)
	case OrderControlPlanesFirst:
		out = append(one(PhaseControlPlanes, ScopeNode, cps), wk...)
	default:
		out = append(wk, one(PhaseControlPlanes, ScopeNode, cps)...)
	}
	markSnapshots(out)
	return out
}

// markSnapshots asks for an etcd snapshot of each cluster before the first
// step that touches one of its etcd members.
func markSnapshots(steps []Step) {
	done := map[string]bool{}
	for i := range steps {
		s := &steps[i]
		if s.Scope == ScopeKubelet {
			continue
		}
		for _, n := range s.Nodes {
			if n.Role != api.RoleControlPlane {
				continue
			}
			for _, c := range n.Clusters {
				if !done[c] {
					done[c] = true
					s.SnapshotBefore = append(s.SnapshotBefore, c)
				}
			}
		}
	}
}

func (e *env) step(phase, scope string, ts []*target) Step {
	s := Step{Phase: phase, Scope: scope}
	for _, t := range ts {
		s.Nodes = append(s.Nodes, StepNode{ID: t.id, Role: t.role, Clusters: clusterNames(t.clusters)})
		s.Disruptions = append(s.Disruptions, e.disruptions(t, scope)...)
	}
	return s
}

// disruptions lists what updating t in scope interrupts, in the order the
// roller causes them: VMs moved, drain, reboot, unit restarts, etcd member
// restart, VIP move.
func (e *env) disruptions(t *target, scope string) []Disruption {
	var out []Disruption
	add := func(kind, detail string, units ...string) {
		out = append(out, Disruption{Node: t.id, Kind: kind, Detail: detail, Units: units})
	}
	reboot := e.spec.Activation == api.ActivationReboot && scope != ScopeKubelet
	member := len(t.clusters) > 0
	if e.spec.DrainVMs && scope != ScopeKubelet {
		add(DisruptionDrainVMs, fmt.Sprintf("move the virtual machines on %s to other nodes first (drain_vms)", t.id))
	}
	if member && (scope != ScopeControlPlane || reboot) {
		add(DisruptionDrain, fmt.Sprintf("cordon and drain %s (its pods move to other nodes), uncordon once it is healthy", t.id))
	}
	if reboot {
		vms := "its virtual machines stop with it (drain_vms is false)"
		if e.spec.DrainVMs {
			vms = "its virtual machines were moved off first"
		}
		add(DisruptionReboot, fmt.Sprintf("reboot %s into the new pin; %s", t.id, vms))
	}
	how := "switch to the new pin in place and restart"
	if reboot {
		how = "come back on the new pin after the reboot"
	}
	if units := e.units(t, scope); len(units) > 0 {
		add(DisruptionRestartUnit, how, units...)
	}
	if t.role != api.RoleControlPlane || scope == ScopeKubelet {
		return out
	}
	for _, c := range t.clusters {
		if !c.Spec.IsControlPlane(t.id) {
			continue
		}
		n := len(c.Spec.ControlPlaneNodes)
		q := n/2 + 1
		detail := fmt.Sprintf("etcd member %s of %s restarts: %d of %d members up meanwhile, quorum %d kept", t.id, c.Metadata.Name, n-1, n, q)
		if n-1 < q {
			detail = fmt.Sprintf("etcd member %s of %s restarts: %d of %d members up meanwhile, below quorum %d, so the API cannot write until it rejoins", t.id, c.Metadata.Name, n-1, n, q)
		}
		add(DisruptionEtcdRestart, detail)
		if ha := c.Spec.HighAvailability; ha.Enabled {
			holds := "another node holds it now"
			if slices.Contains(t.node.Facts.Addresses, ha.VIPAddress) {
				holds = "it holds it now"
			}
			add(DisruptionVIPMove, fmt.Sprintf("VIP %s moves to another control plane if %s holds it when kube-apiserver restarts (%s)", ha.VIPAddress, t.id, holds))
		}
	}
	return out
}

// unitNodeAgent is the agent's own unit; the clusters' units come from
// their render.Layout.
const unitNodeAgent = "kcore-node-agent"

// units lists the units the step restarts on t: the control-plane units in
// scopes node and control-plane, the kubelet (and kube-proxy with bridge CNI)
// in scopes node and kubelet, keepalived with high availability when the
// OS pin moves (every kind but kubernetes), and the node agent when kcore itself is updated.
func (e *env) units(t *target, scope string) []string {
	var out []string
	add := func(us ...string) {
		for _, u := range us {
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	for _, c := range t.clusters {
		// Each cluster's units by its layout: a cluster outside the
		// primary slot has its own names, and no kubelet on a machine it
		// shares (render.Place).
		l := render.ClusterLayout(c)
		cp := c.Spec.IsControlPlane(t.id)
		if cp && scope != ScopeKubelet {
			add(l.UnitEtcd, l.UnitAPIServer, l.UnitControllerManager, l.UnitScheduler)
			if c.Spec.HighAvailability.Enabled && e.spec.UpdateKind != api.UpdateKindK8s {
				add(l.UnitKeepalived)
			}
		}
		if scope != ScopeControlPlane && !slices.Contains(c.Status.Shared, t.id) {
			add(l.UnitKubelet)
			if c.Spec.CNI == api.CNIBridge {
				add(l.UnitKubeProxy)
			}
		}
	}
	if e.spec.UpdateKind == api.UpdateKindKcore && scope != ScopeKubelet {
		add(unitNodeAgent)
	}
	return out
}
