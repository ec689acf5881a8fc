package orchestrator

import (
	"fmt"
	"maps"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/rollout"
)

// mover is what one roller step moves on each of its nodes. A
// ClusterUpdate moves the node's release pin (pinMover); a spec rollout
// publishes the node's pending NodeState (specMover). The drain, the VIP
// hand-over before a control plane's API server restarts, and the health
// gates are the roller's, the same for both.
type mover interface {
	// scope is what the step restarts: rollout.ScopeNode, ScopeControlPlane
	// (the control-plane units, so the VIP moves first) or ScopeKubelet.
	scope() string
	// drains reports whether the node is cordoned and drained first and
	// uncordoned once healthy.
	drains() bool
	// pending reports whether node id of co has not moved yet.
	pending(co *clusterObj, id string) bool
	// move moves node id of co (after the VIP hand-over); changed means co
	// must be committed before anything else happens.
	move(co *clusterObj, id string) (changed bool, wait string)
	// published says what node id's stored state st still lacks: "" once
	// it carries the move.
	published(c *api.KubernetesCluster, id string, st *storedState) string
	// kubelet is the release the Kubernetes Node must report once the step
	// is done ("" when the kubelet's release does not move).
	kubelet(c *api.KubernetesCluster) string
}

// pinMover moves a node's components of scope to the release want names
// for its cluster (nothing when it is empty): a ClusterUpdate's step.
type pinMover struct {
	r    *roller
	step string
	want func(*api.KubernetesCluster) string
}

func (m pinMover) scope() string { return m.step }
func (m pinMover) drains() bool  { return drains(m.step) }

func (m pinMover) pending(co *clusterObj, id string) bool {
	v := m.want(co.c)
	return v != "" && wantPin(co.c, id, m.step, v) != co.c.Status.Pins[id]
}

func (m pinMover) move(co *clusterObj, id string) (bool, string) {
	c, v := co.c, m.want(co.c)
	pin := wantPin(c, id, m.step, v)
	pin.VIPReleased = c.Status.Pins[id].VIPReleased
	m.r.o.log.Info("activate release", m.r.logKey(), m.r.name, "cluster", c.Metadata.Name, "node", id, "scope", m.step, "release", v)
	return storePin(c, id, pin), ""
}

func (m pinMover) published(c *api.KubernetesCluster, id string, st *storedState) string {
	v := m.want(c)
	if v == "" {
		return ""
	}
	if u := versionUnit(c, id, m.step); u != "" && unitVersion(st, u) != v {
		return fmt.Sprintf("%s: state with %s not published yet", id, v)
	}
	return ""
}

func (m pinMover) kubelet(c *api.KubernetesCluster) string {
	if m.step == rollout.ScopeControlPlane {
		return ""
	}
	return m.want(c)
}

// specMover publishes a node's pending NodeState of the cluster's spec
// rollout: it releases the node (records the generation it ran), and the
// next reconcile pass publishes the state rendered from the new spec.
// Nothing is drained: restarting a unit in place keeps the pods running.
type specMover struct {
	r    *roller
	step string
}

func (m specMover) scope() string { return m.step }
func (m specMover) drains() bool  { return false }

func (m specMover) pending(co *clusterObj, id string) bool {
	return co.c.Status.SpecRollout.Held(id)
}

func (m specMover) move(co *clusterObj, id string) (bool, string) {
	c := co.c
	st, wait := m.r.published(c, id)
	if wait != "" {
		return false, wait
	}
	ro := *c.Status.SpecRollout
	ro.Released = maps.Clone(ro.Released)
	if ro.Released == nil {
		ro.Released = map[string]int64{}
	}
	ro.Released[id] = st.ns.Generation
	c.Status.SpecRollout = &ro
	m.r.o.log.Info("publish the new spec to the node", m.r.logKey(), m.r.name, "node", id, "scope", m.step)
	return true, ""
}

func (m specMover) published(c *api.KubernetesCluster, id string, st *storedState) string {
	ro := c.Status.SpecRollout
	if ro == nil {
		return ""
	}
	if from, ok := ro.Released[id]; ok && st.ns.Generation <= from {
		return fmt.Sprintf("%s: state of spec generation %d not published yet", id, ro.Generation)
	}
	return ""
}

func (m specMover) kubelet(*api.KubernetesCluster) string { return "" }

// controlPlaneUnits are the units whose restart on a control plane goes
// one node at a time, the VIP handed over first.
func controlPlaneUnits() []string {
	return []string{render.UnitEtcd, render.UnitAPIServer, render.UnitControllerManager, render.UnitScheduler, render.UnitKeepalived}
}
