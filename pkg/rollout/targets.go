package rollout

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// target is one node the update moves.
type target struct {
	id       string
	node     *api.Node
	role     string
	clusters []*api.KubernetesCluster
	// last is true for the node that goes last among control planes: the
	// etcd leader of one of its clusters, or its bootstrap node when no
	// leader is known.
	last bool
}

// env indexes an Input.
type env struct {
	spec     api.UpdateSpec
	name     string
	nodes    map[string]*api.Node
	clusters []*api.KubernetesCluster
	// memberOf maps a node id to the clusters it belongs to, sorted by name.
	memberOf map[string][]*api.KubernetesCluster
}

func newEnv(in Input) *env {
	e := &env{
		spec:     in.Update.Spec,
		name:     in.Update.Metadata.Name,
		nodes:    map[string]*api.Node{},
		memberOf: map[string][]*api.KubernetesCluster{},
	}
	for _, n := range in.Nodes {
		if n != nil {
			e.nodes[n.Metadata.Name] = n
		}
	}
	for _, c := range in.Clusters {
		if c != nil {
			e.clusters = append(e.clusters, c)
		}
	}
	sort.SliceStable(e.clusters, func(i, j int) bool { return e.clusters[i].Metadata.Name < e.clusters[j].Metadata.Name })
	for _, c := range e.clusters {
		for _, m := range c.Spec.Members() {
			if !slices.Contains(e.memberOf[m.NodeID], c) {
				e.memberOf[m.NodeID] = append(e.memberOf[m.NodeID], c)
			}
			e.pinVersions(c, m.NodeID)
		}
	}
	return e
}

// pinVersions makes a member's version facts say what the cluster pins it
// to (its release and the node's rollout pin): the binaries in the agent's
// --bin-dir, which the facts probe, need not be the ones it runs.
func (e *env) pinVersions(c *api.KubernetesCluster, id string) {
	n := e.nodes[id]
	if n == nil || c.Status.KubernetesVersion == "" && c.Status.Pins[id] == (api.NodePin{}) {
		return
	}
	cp := *n
	cp.Facts.Versions = maps.Clone(n.Facts.Versions)
	if cp.Facts.Versions == nil {
		cp.Facts.Versions = map[string]string{}
	}
	set := func(key string, controlPlane bool) {
		if v := c.Status.Release(id, controlPlane); v != "" {
			cp.Facts.Versions[key] = v
		}
	}
	set(VersionKubelet, false)
	if c.Spec.IsControlPlane(id) {
		set(VersionAPIServer, true)
	}
	e.nodes[id] = &cp
}

// targets resolves the update's nodes, sorted by id. allNodes means every
// registered node and every member of a stored cluster; a target that is
// not registered is reported as update-node-unknown and left out.
func (e *env) targets() ([]*target, []plan.Issue) {
	var issues []plan.Issue
	paths := map[string]string{}
	var ids []string
	if e.spec.AllNodes {
		seen := map[string]bool{}
		for id := range e.nodes {
			seen[id] = true
		}
		for id := range e.memberOf {
			seen[id] = true
		}
		for id := range seen {
			ids = append(ids, id)
		}
	} else {
		for i, id := range e.spec.Nodes {
			ids = append(ids, id)
			paths[id] = fmt.Sprintf("spec.nodes[%d]", i)
		}
	}
	sort.Strings(ids)
	ids = slices.Compact(ids)
	var out []*target
	for _, id := range ids {
		n := e.nodes[id]
		if n == nil {
			issue := plan.Issue{Code: CodeNodeUnknown, Path: paths[id], Node: id,
				Message: fmt.Sprintf("node %s is not registered with the controller, so it cannot be updated", id),
				Fix:     "start kcore-node-agent on the node and check `kctl node list`, or leave it out of spec.nodes"}
			if cs := e.memberOf[id]; len(cs) > 0 {
				issue.Cluster = cs[0].Metadata.Name
				issue.Message = fmt.Sprintf("node %s is a member of cluster %s but is not registered with the controller, so it cannot be updated", id, issue.Cluster)
			}
			issues = append(issues, issue)
			continue
		}
		out = append(out, e.target(id, n))
	}
	return out, issues
}

func (e *env) target(id string, n *api.Node) *target {
	t := &target{id: id, node: n, role: RoleStandalone, clusters: e.memberOf[id]}
	for _, c := range t.clusters {
		if c.Spec.IsControlPlane(id) {
			t.role = api.RoleControlPlane
			if lastControlPlane(c, e.nodes) == id {
				t.last = true
			}
		} else if t.role == RoleStandalone {
			t.role = api.RoleWorker
		}
	}
	return t
}

// lastControlPlane is the control plane of c updated last: the one whose
// facts carry EtcdLeaderLabel=true, else the bootstrap node.
func lastControlPlane(c *api.KubernetesCluster, nodes map[string]*api.Node) string {
	for _, m := range c.Spec.ControlPlaneNodes {
		if n := nodes[m.NodeID]; n != nil && n.Facts.Labels[EtcdLeaderLabel] == "true" {
			return m.NodeID
		}
	}
	if len(c.Spec.ControlPlaneNodes) == 0 {
		return ""
	}
	return c.Spec.ControlPlaneNodes[0].NodeID
}

func clusterNames(cs []*api.KubernetesCluster) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Metadata.Name
	}
	return out
}
