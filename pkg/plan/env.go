package plan

import (
	"net"
	"slices"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// env is the read-only world a plan is computed against.
type env struct {
	nodes       map[string]*api.Node
	nodeIDs     []string // sorted
	stored      map[string]*api.KubernetesCluster
	phase       map[string]string
	generation  map[string]int64             // the stored spec's generation
	status      map[string]api.ClusterStatus // stored, kept by an update
	storedNames []string                     // sorted
	opts        render.Options
}

func newEnv(in Input) *env {
	e := &env{nodes: map[string]*api.Node{}, stored: map[string]*api.KubernetesCluster{}, phase: map[string]string{},
		generation: map[string]int64{}, status: map[string]api.ClusterStatus{}, opts: in.Render}
	for _, n := range in.Nodes {
		if n == nil {
			continue
		}
		if _, dup := e.nodes[n.Metadata.Name]; !dup {
			e.nodeIDs = append(e.nodeIDs, n.Metadata.Name)
		}
		e.nodes[n.Metadata.Name] = n
	}
	slices.Sort(e.nodeIDs)
	for _, c := range in.Stored {
		if c == nil {
			continue
		}
		name := c.Metadata.Name
		if _, dup := e.stored[name]; !dup {
			e.storedNames = append(e.storedNames, name)
		}
		e.stored[name] = prepared(c)
		e.phase[name] = c.Status.Phase
		e.generation[name] = c.Metadata.Generation
		e.status[name] = c.Status
	}
	slices.Sort(e.storedNames)
	return e
}

// ready reports whether a node is registered and heartbeating.
func (e *env) ready(id string) bool {
	n := e.nodes[id]
	return n != nil && n.Status.Ready
}

// nodeIPs lists every address a node reports, from its address list and its interfaces.
func nodeIPs(n *api.Node) []net.IP {
	var out []net.IP
	for _, a := range n.Facts.Addresses {
		if ip := parseAddr(a); ip != nil {
			out = append(out, ip)
		}
	}
	for _, i := range n.Facts.Interfaces {
		for _, a := range i.Addresses {
			if ip := parseAddr(a); ip != nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

// parseAddr parses "10.0.0.1" or "10.0.0.1/24".
func parseAddr(s string) net.IP {
	if ip, _, err := net.ParseCIDR(s); err == nil {
		return ip
	}
	return net.ParseIP(s)
}

// interfaceHolding names the interface that carries ip, or "addresses" when
// only the node's address list has it.
func interfaceHolding(n *api.Node, ip net.IP) string {
	for _, i := range n.Facts.Interfaces {
		for _, a := range i.Addresses {
			if got := parseAddr(a); got != nil && got.Equal(ip) {
				return i.Name
			}
		}
	}
	return ""
}

func hasInterface(n *api.Node, name string) bool {
	return slices.ContainsFunc(n.Facts.Interfaces, func(i api.Interface) bool { return i.Name == name })
}

func interfaceNames(n *api.Node) []string {
	out := make([]string, 0, len(n.Facts.Interfaces))
	for _, i := range n.Facts.Interfaces {
		out = append(out, i.Name)
	}
	return out
}

func memberIDs(nodes []api.ClusterNode) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.NodeID)
	}
	return out
}

func isMember(c *api.KubernetesCluster, id string) bool {
	if c == nil {
		return false
	}
	return slices.ContainsFunc(c.Spec.Members(), func(n api.ClusterNode) bool { return n.NodeID == id })
}
