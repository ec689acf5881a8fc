package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/render"
)

// stepper appends steps and stamps each with the projected etcd state.
type stepper struct {
	steps []Step
	etcd  *etcdState
	// teardown marks a lost quorum as the expected end of a deleted cluster.
	teardown bool
	// forming marks a new cluster whose members are still starting.
	forming bool
	// removeStart is the etcd member count before the first removal: every
	// removal must keep a majority of it healthy.
	removeStart int
	// replace marks a control-plane replacement: a joining control plane
	// is a learner (no vote, quorum unchanged) until a separate promote
	// step, and the old Node objects are deleted after every other step.
	replace bool
}

func (s *stepper) add(node, component, action, disruption, detail string, changes ...ItemChange) {
	q := s.etcd.String()
	switch {
	case len(s.etcd.members) == 0 || s.etcd.hasQuorum():
		s.forming = false
	case s.teardown:
		q += " (expected: the cluster is being deleted)"
	case s.forming:
		q = s.etcd.counts() + fmt.Sprintf(" (forming: etcd answers once %d members run)", s.etcd.quorum())
	}
	s.steps = append(s.steps, Step{Node: node, Component: component, Action: action, Disruption: disruption, Detail: detail, QuorumAfter: q, Changes: changes})
}

// Modes of stepsFromDiff.
const (
	modeCreate   = iota // a new cluster: etcd members form the initial cluster
	modeUpdate          // a stored cluster changes; joining and leaving nodes change etcd membership
	modeTeardown        // a deleted cluster: every node leaves, etcd goes down with it
)

// group is the changed items of one component on one node.
type group struct {
	component string
	items     []ItemChange
}

// groups splits a node's change into components, ordered by componentRank
// (reversed for a leaving node: processes stop before their files go).
func groups(nc NodeChange, l render.Layout) []group {
	var out []group
	for _, it := range nc.Items {
		c := componentOf(it, l, nc.Node)
		i := slices.IndexFunc(out, func(g group) bool { return g.component == c })
		if i < 0 {
			out = append(out, group{component: c})
			i = len(out) - 1
		}
		out[i].items = append(out[i].items, it)
	}
	slices.SortStableFunc(out, func(a, b group) int { return componentRank(a.component) - componentRank(b.component) })
	if nc.Membership == MembershipLeave {
		slices.Reverse(out)
	}
	return out
}

// stepsFromDiff turns the rendered diff into ordered steps: each node's
// changed components in order, membership steps (etcd learner and removal,
// drain, Node object) where nodes join or leave, and the add-ons of the
// nodes that stay last.
// l is the cluster's layout, in which its items are named.
func (b *builder) stepsFromDiff(s *stepper, mode int, l render.Layout, changes []plannedChange) {
	var addons []Step
	var dropNodes []string
	formed := false
	for _, pc := range changes {
		id := pc.Node
		leaving := pc.Membership == MembershipLeave
		if leaving && mode == modeUpdate && (!pc.controlPlane || b.env.ready(id)) {
			s.add(id, ComponentKubelet, StepDrain, DisruptionDrain, "cordon and drain "+id+"; its pods move to other nodes")
		}
		gs := groups(pc.NodeChange, l)
		if leaving && mode == modeUpdate {
			// A leaving control plane leaves etcd after its drain and
			// before its units stop, as the orchestrator does it.
			slices.SortStableFunc(gs, func(a, b group) int {
				return boolInt(a.component != ComponentEtcd) - boolInt(b.component != ComponentEtcd)
			})
		}
		for _, g := range gs {
			action, disruption := groupAction(g, mode)
			if pc.Membership == MembershipJoin && action == StepApply {
				action = StepCreate
			}
			detail := ""
			if g.component == ComponentEtcd && pc.controlPlane && pc.Membership != "" {
				action, disruption, detail = b.etcdMembership(s, mode, id, pc.Membership, changes, &formed)
			}
			if g.component == ComponentAddons && pc.Membership == "" && pc.kubeDNSReplaced {
				action = StepReplace
				detail = "the kube-dns Service is deleted and created again with the new cluster IP: a Service's clusterIP cannot change in place; names do not resolve through it in between, and pods keep the old resolver until they are recreated"
			}
			if g.component == ComponentContainerd && disruption == DisruptionNone && onlyFiles(g) {
				detail = "containerd reads " + render.ContainerdCertsDir + " on each pull: the new registry hosts apply without a restart"
			}
			if g.component == ComponentKubelet && pc.taint != "" {
				detail = fmt.Sprintf("Node %s: taint %s %s by the orchestrator through the API (kubelet applies its taint flag only when it first registers)", id, controlPlaneTaint, pc.taint)
			}
			if isAddon(g.component) && pc.Membership != MembershipLeave {
				saved := s.steps
				s.steps = nil
				s.add(id, g.component, action, disruption, detail, g.items...)
				addons = append(addons, s.steps...)
				s.steps = saved
				continue
			}
			s.add(id, g.component, action, disruption, detail, g.items...)
			if s.replace && g.component == ComponentEtcd && pc.controlPlane && pc.Membership == MembershipJoin {
				b.promote(s, id)
			}
		}
		if leaving && mode == modeUpdate {
			if s.replace {
				dropNodes = append(dropNodes, id)
				continue
			}
			s.add(id, ComponentMembership, StepRemove, DisruptionNone, "delete the Node object "+id+" from Kubernetes")
		}
	}
	s.steps = append(s.steps, addons...)
	for _, id := range dropNodes {
		s.add(id, ComponentMembership, StepRemove, DisruptionNone, "delete the Node object "+id+" from Kubernetes, now that "+id+" left etcd and the other control planes' keepalived peers")
	}
}

// etcdMembership projects a joining or leaving control plane's etcd
// member onto the quorum, blocks a step that would lose it, and says what
// happens to the member.
func (b *builder) etcdMembership(s *stepper, mode int, id, membership string, changes []plannedChange, formed *bool) (string, string, string) {
	switch {
	case mode == modeCreate && membership == MembershipJoin:
		if !*formed {
			var ids []string
			for _, pc := range changes {
				if pc.controlPlane && pc.Membership == MembershipJoin {
					ids = append(ids, pc.Node)
					s.etcd.add(pc.Node, false)
				}
			}
			s.forming, *formed = true, true
			s.etcd.add(id, b.env.ready(id))
			return StepStart, DisruptionNone, fmt.Sprintf("start etcd member %s of the initial cluster %s (bootstrap node)", id, strings.Join(ids, ", "))
		}
		s.etcd.add(id, b.env.ready(id))
		return StepStart, DisruptionNone, "start etcd member " + id + " of the initial cluster"
	case membership == MembershipJoin && s.replace:
		return StepAddMember, DisruptionEtcdMembership, fmt.Sprintf("add %s as an etcd learner (it does not vote: the quorum does not change) and start etcd on it", id)
	case membership == MembershipJoin:
		had := s.etcd.hasQuorum()
		s.etcd.add(id, b.env.ready(id))
		if had && !s.etcd.hasQuorum() {
			b.block(CodeQuorumLoss, "spec.controlPlaneNodes", id,
				"bring the not-ready control planes back, or make sure the new node is ready, before adding it",
				"adding %s as an etcd member leaves %s", id, s.etcd)
		}
		return StepAddMember, DisruptionEtcdMembership, fmt.Sprintf("add %s as an etcd learner, start etcd, promote it to a voting member once it has caught up", id)
	case mode == modeTeardown:
		s.etcd.stop(id)
		return StepStop, DisruptionEtcdMembership, "stop etcd member " + id
	}
	if s.removeStart == 0 {
		s.removeStart = len(s.etcd.members)
	}
	start := s.removeStart
	need := quorumOf(start)
	s.etcd.remove(id)
	if s.etcd.healthyCount() < need || !s.etcd.hasQuorum() {
		note := ""
		if down := s.etcd.down(); len(down) > 0 {
			note = " (not ready: " + names(down) + ")"
		}
		fix := "keep a majority of the control planes healthy through the change: remove fewer control planes, bring the not-ready ones back first, or add replacements (--add-control-plane) before removing"
		if s.replace {
			fix = "replace one control plane at a time, and a dead one first: `kctl kubernetes replace` its not-ready members before any healthy one; with fewer healthy members than a quorum, restore etcd from a snapshot instead"
		}
		b.block(CodeQuorumLoss, "spec.controlPlaneNodes", id, fix,
			"removing %s leaves %s (%s); the change starts with %d members and must keep %d of them healthy at every step%s",
			id, plural(s.etcd.healthyCount(), "healthy etcd member"), s.etcd, start, need, note)
	}
	if !b.env.ready(id) {
		return StepRemoveMember, DisruptionEtcdMembership, fmt.Sprintf("remove %s (not ready) from the etcd membership through a healthy member while the others are a quorum", id)
	}
	return StepRemoveMember, DisruptionEtcdMembership, fmt.Sprintf("remove %s from the etcd membership through a healthy member, then stop etcd on %s", id, id)
}

// onlyFiles reports whether a group changes files and nothing else.
func onlyFiles(g group) bool {
	return !slices.ContainsFunc(g.items, func(it ItemChange) bool { return it.Kind != KindFile })
}

// groupAction is a component's step action and disruption class, from its
// strongest item: a unit's stop, restart, start or reload, else a task run,
// else a volume's change, else its files'.
func groupAction(g group, mode int) (string, string) {
	has := func(kind, change string) bool {
		return slices.ContainsFunc(g.items, func(it ItemChange) bool { return it.Kind == kind && it.Change == change })
	}
	vip := g.component == ComponentKeepalived && mode != modeCreate
	switch {
	case has(KindUnit, ChangeStop):
		if vip {
			return StepStop, DisruptionVIPMove
		}
		return StepStop, DisruptionRestartUnit
	case has(KindUnit, ChangeRestart):
		if vip {
			return StepRestart, DisruptionVIPMove
		}
		return StepRestart, DisruptionRestartUnit
	case has(KindUnit, ChangeStart):
		return StepStart, DisruptionNone
	case has(KindUnit, ChangeReload):
		// The process reads its new files in place: keepalived keeps its
		// VRRP state, so the VIP stays where it is.
		return StepReload, DisruptionNone
	case has(KindUnit, ChangeUpdate), has(KindTask, ChangeRun), has(KindTask, ChangeUpdate):
		return StepApply, DisruptionNone
	case has(KindVolume, ChangeCreate):
		return StepCreate, DisruptionNone
	case has(KindVolume, ChangeGrow):
		return StepGrow, DisruptionVolumeGrow
	case has(KindVolume, ChangeChange):
		return StepRemount, DisruptionRestartUnit
	case has(KindVolume, ChangeKeep):
		return StepKeep, DisruptionNone
	case has(KindVolume, ChangePurge):
		return StepRemove, DisruptionNone
	}
	adds, removes := has(KindFile, ChangeAdd), has(KindFile, ChangeRemove)
	changed := has(KindFile, ChangeChange)
	if g.component == ComponentCertificates {
		switch {
		case changed && mode != modeCreate:
			return StepReissue, DisruptionCertReissue
		case adds && !removes && !changed:
			return StepIssue, DisruptionNone
		case removes && !adds && !changed:
			return StepRemove, DisruptionNone
		}
		return StepReissue, DisruptionCertReissue
	}
	switch {
	case adds && !removes && !changed:
		return StepCreate, DisruptionNone
	case removes && !adds && !changed:
		return StepRemove, DisruptionNone
	}
	return StepApply, DisruptionNone
}
