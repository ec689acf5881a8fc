package plan

import (
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// stepper appends steps and stamps each with the projected etcd state.
type stepper struct {
	steps []Step
	etcd  *etcdState
	// teardown marks a lost quorum as the expected end of a deleted cluster.
	teardown bool
	// forming marks a new cluster whose members are still starting.
	forming bool
}

func (s *stepper) add(node, component, action, disruption, detail string) {
	q := s.etcd.String()
	switch {
	case len(s.etcd.members) == 0 || s.etcd.hasQuorum():
		s.forming = false
	case s.teardown:
		q += " (expected: the cluster is being deleted)"
	case s.forming:
		q = s.etcd.counts() + fmt.Sprintf(" (forming: etcd answers once %d members run)", s.etcd.quorum())
	}
	s.steps = append(s.steps, Step{Node: node, Component: component, Action: action, Disruption: disruption, Detail: detail, QuorumAfter: q})
}

// componentRank orders a node's steps: identity and network first, then
// etcd, the control plane, keepalived, kubelet, volumes, and the cluster add-ons.
func componentRank(c string) int {
	order := []string{
		ComponentCertificates, ComponentFirewall, ComponentEtcd, ComponentAPIServer,
		ComponentControllerManager, ComponentScheduler, ComponentKeepalived, ComponentKubelet,
		ComponentVolumePrefix, ComponentMembership, ComponentCilium, ComponentProvisioner,
	}
	for i, o := range order {
		if c == o || (o == ComponentVolumePrefix && strings.HasPrefix(c, o)) {
			return i
		}
	}
	return len(order)
}

// disruptionRank orders disruption classes from none to etcd-membership.
func disruptionRank(d string) int {
	for i, o := range []string{DisruptionNone, DisruptionRestartUnit, DisruptionCertReissue, DisruptionVolumeGrow, DisruptionVIPMove, DisruptionDrain, DisruptionEtcdMembership} {
		if d == o {
			return i
		}
	}
	return 0
}

// isAddon reports whether a component is a cluster add-on that runs once, on
// the bootstrap control plane, after the per-node steps.
func isAddon(component string) bool {
	return component == ComponentCilium || component == ComponentProvisioner
}

// nodeOrder lists the members: control planes in manifest order, then workers.
func nodeOrder(c *api.KubernetesCluster) []string { return memberIDs(c.Spec.Members()) }

// volumeComponent is the component name of a volume.
func volumeComponent(name string) string { return ComponentVolumePrefix + name }
