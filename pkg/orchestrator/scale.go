package orchestrator

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
)

// membershipStep is the outcome of one etcd membership pass.
type membershipStep struct {
	// hold lists control planes whose NodeState must not be published yet:
	// they are not etcd members, so their etcd could not join.
	hold map[string]bool
	// pending is true while a member must still be added, promoted or removed.
	pending bool
	cond    api.Condition
}

// peerURL is a control plane's etcd peer URL in c, as render writes it.
func peerURL(c *api.KubernetesCluster, address string) string {
	return "https://" + net.JoinHostPort(address, strconv.Itoa(render.ClusterLayout(c).EtcdPeerPort))
}

// syncEtcd moves etcd's membership one step towards the spec's control
// planes: remove a member that left (after every leaving node is drained,
// before its units stop), add one new
// control plane as a learner (etcd allows one learner at a time), promote a
// learner as soon as etcd accepts (it refuses until the learner has started
// and caught up, so the promotion is retried; the new control plane's kube-apiserver talks only
// to its local member and cannot come up while it is a learner). Each step is
// idempotent and
// derived from etcd's member list, so a new leader resumes it.
func (o *Orchestrator) syncEtcd(ctx context.Context, c *api.KubernetesCluster, s *pki.ClusterSecrets, states map[string]*storedState, reports map[string]*reportObj, draining []string) membershipStep {
	step := membershipStep{hold: map[string]bool{}}
	want := map[string]string{}
	for _, n := range c.Spec.ControlPlaneNodes {
		want[peerURL(c, n.AdvertiseAddress)] = n.NodeID
	}
	fail := func(err error) membershipStep {
		for _, n := range c.Spec.ControlPlaneNodes {
			if states[n.NodeID] == nil {
				step.hold[n.NodeID] = true
			}
		}
		step.pending = true
		step.cond = api.Condition{Type: CondEtcdMembership, Status: StatusFalse, Reason: "MembershipFailed", Message: err.Error()}
		return step
	}
	members, err := o.cfg.Etcd.Members(ctx, c, s)
	if err != nil {
		return fail(err)
	}
	byNode := map[string]EtcdMember{}
	voters, learners := 0, 0
	var remove []EtcdMember
	for _, m := range members {
		node := ""
		for _, u := range m.PeerURLs {
			if id, ok := want[u]; ok {
				node = id
			}
		}
		if node == "" {
			remove = append(remove, m)
			continue
		}
		byNode[node] = m
		if m.IsLearner {
			learners++
		} else {
			voters++
		}
	}
	var done []string
	if len(remove) > 0 && len(draining) > 0 {
		step.pending = true
		done = append(done, "members leave etcd once "+strings.Join(draining, ", ")+" drained")
		remove = nil
	}
	for _, m := range remove {
		if !m.IsLearner && voters < 1 {
			return fail(fmt.Errorf("remove etcd member %s: no voting member would be left", m.Name))
		}
		if err := o.cfg.Etcd.Remove(ctx, c, s, m.ID); err != nil {
			return fail(err)
		}
		done = append(done, "removed "+memberName(m))
	}
	for _, n := range c.Spec.ControlPlaneNodes {
		m, ok := byNode[n.NodeID]
		switch {
		case !ok && learners == 0:
			if _, err := o.cfg.Etcd.AddLearner(ctx, c, s, peerURL(c, n.AdvertiseAddress)); err != nil {
				return fail(err)
			}
			learners++
			step.pending = true
			done = append(done, "added "+n.NodeID+" as a learner")
		case !ok:
			step.hold[n.NodeID] = true
			step.pending = true
		case m.IsLearner:
			if err := o.cfg.Etcd.Promote(ctx, c, s, m.ID); err != nil {
				step.pending = true
				done = append(done, fmt.Sprintf("promote %s later: %v", n.NodeID, err))
				continue
			}
			done = append(done, "promoted "+n.NodeID)
		}
	}
	msg := "etcd members match the control planes"
	if len(done) > 0 {
		msg = strings.Join(done, "; ")
	}
	status, reason := StatusTrue, "InSync"
	if step.pending {
		status, reason = StatusFalse, "Changing"
	}
	step.cond = api.Condition{Type: CondEtcdMembership, Status: status, Reason: reason, Message: msg}
	return step
}

func memberName(m EtcdMember) string {
	if m.Name != "" {
		return m.Name
	}
	return strings.Join(m.PeerURLs, ",")
}
