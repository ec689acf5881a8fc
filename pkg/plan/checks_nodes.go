package plan

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// checkMembers checks the members of c that only selects (all when only is
// nil) against the registered nodes: registered, ready, address and
// interfaces present.
func (b *builder) checkMembers(c *api.KubernetesCluster, only func(string) bool) {
	s := c.Spec
	for i, m := range s.ControlPlaneNodes {
		if only != nil && !only(m.NodeID) {
			continue
		}
		p := fmt.Sprintf("spec.controlPlaneNodes[%d]", i)
		n := b.env.nodes[m.NodeID]
		switch {
		case n == nil:
			b.block(CodeControlPlaneNotRegistered, p+".nodeId", m.NodeID,
				"install and start kcore-node-agent on that machine so it registers (`kctl node list` shows it), or correct the node id",
				"control-plane node %s is not registered with the controller", m.NodeID)
			continue
		case !n.Status.Ready:
			b.block(CodeControlPlaneNotReady, p+".nodeId", m.NodeID,
				fmt.Sprintf("bring the node's agent back (`kctl node get %s`; `journalctl -u kcore-node-agent` on the node) and plan again when it is ready", m.NodeID),
				"control-plane node %s is registered but not ready (last heartbeat %s)", m.NodeID, orNever(n.Status.LastHeartbeat))
		}
		b.checkNodeFacts(n, m, p)
		if s.HighAvailability.Enabled && s.HighAvailability.VIPInterface != "" && !hasInterface(n, s.HighAvailability.VIPInterface) {
			b.block(CodeInterfaceMissing, "spec.highAvailability.vipInterface", m.NodeID,
				"set vipInterface to an interface every control plane has, or rename the interface on the node",
				"vipInterface %s is not an interface of %s (it has %s)", s.HighAvailability.VIPInterface, m.NodeID, listOrNone(interfaceNames(n)))
		}
	}
	for i, m := range s.WorkerNodes {
		if only != nil && !only(m.NodeID) {
			continue
		}
		p := fmt.Sprintf("spec.workerNodes[%d]", i)
		n := b.env.nodes[m.NodeID]
		switch {
		case n == nil:
			b.warn(CodeWorkerNotRegistered, p+".nodeId", m.NodeID,
				"start kcore-node-agent on that machine; the worker joins once it registers",
				"worker %s is not registered with the controller; it joins when it registers", m.NodeID)
			continue
		case !n.Status.Ready:
			b.warn(CodeWorkerNotReady, p+".nodeId", m.NodeID,
				fmt.Sprintf("check the node's agent (`kctl node get %s`); the worker joins once it is ready", m.NodeID),
				"worker %s is registered but not ready (last heartbeat %s)", m.NodeID, orNever(n.Status.LastHeartbeat))
		}
		b.checkNodeFacts(n, m, p)
	}
}

// checkNodeFacts blocks a member whose advertise address or iface is not on its node.
func (b *builder) checkNodeFacts(n *api.Node, m api.ClusterNode, p string) {
	if ip := net.ParseIP(m.AdvertiseAddress); ip != nil && !slices.ContainsFunc(nodeIPs(n), ip.Equal) {
		b.block(CodeAddressNotOnNode, p+".advertiseAddress", m.NodeID,
			"use one of the node's own addresses (`kctl node get "+m.NodeID+"` lists them)",
			"%s is not an address of %s (it has %s)", m.AdvertiseAddress, m.NodeID, listOrNone(ipStrings(nodeIPs(n))))
	}
	if m.Iface != "" && !hasInterface(n, m.Iface) {
		b.block(CodeInterfaceMissing, p+".iface", m.NodeID,
			"set iface to one of the node's interfaces",
			"interface %s is not on %s (it has %s)", m.Iface, m.NodeID, listOrNone(interfaceNames(n)))
	}
}

// checkCilium blocks a cilium cluster on a host that already runs Cilium for
// something else: another stored cilium cluster, or an agent the facts report
// on a node this cluster did not own before.
func (b *builder) checkCilium(c, before *api.KubernetesCluster) {
	if c.Spec.CNI != api.CNICilium {
		return
	}
	const fix = "only one Cilium may run per host: give this cluster spec.cni bridge (or an API port other than 6443), or remove the other Cilium first"
	for i, m := range c.Spec.Members() {
		if isMember(before, m.NodeID) {
			continue
		}
		p := memberPath(c, i) + ".nodeId"
		other := ""
		for _, name := range b.env.storedNames {
			o := b.env.stored[name]
			if name != c.Metadata.Name && o.Spec.CNI == api.CNICilium && isMember(o, m.NodeID) {
				other = name
				break
			}
		}
		switch {
		case other != "":
			b.block(CodeCiliumAlreadyRunning, p, m.NodeID, fix,
				"%s already runs Cilium for cluster %q; two Cilium agents on one host would share BPF pins", m.NodeID, other)
		case b.env.nodes[m.NodeID] != nil && b.env.nodes[m.NodeID].Facts.CiliumRunning:
			b.block(CodeCiliumAlreadyRunning, p, m.NodeID, fix,
				"a Cilium agent already runs on %s; two Cilium agents on one host would share BPF pins", m.NodeID)
		}
	}
}

// memberPath is the field path of the i-th entry of Spec.Members().
func memberPath(c *api.KubernetesCluster, i int) string {
	if cps := len(c.Spec.ControlPlaneNodes); i >= cps {
		return fmt.Sprintf("spec.workerNodes[%d]", i-cps)
	}
	return fmt.Sprintf("spec.controlPlaneNodes[%d]", i)
}

// checkAddresses blocks a VIP or load-balancer pool that c introduces (one
// before did not have) when a registered node holds an address in it, when a
// node saw it answer ARP, or when another stored cluster uses it.
func (b *builder) checkAddresses(c, before *api.KubernetesCluster) {
	s := c.Spec
	type target struct {
		path, what string
		contains   func(net.IP) bool
		overlaps   func(*api.KubernetesCluster) string
	}
	var targets []target
	if s.HighAvailability.Enabled {
		vip := net.ParseIP(s.HighAvailability.VIPAddress)
		isNew := before == nil || !before.Spec.HighAvailability.Enabled || before.Spec.HighAvailability.VIPAddress != s.HighAvailability.VIPAddress
		if vip != nil && isNew {
			targets = append(targets, target{
				path: "spec.highAvailability.vipAddress", what: "VIP " + vip.String(),
				contains: vip.Equal,
				overlaps: func(o *api.KubernetesCluster) string { return usesAddress(o, vip) },
			})
		}
	}
	for i, pool := range s.Cilium.LoadBalancerIPPools {
		_, n, err := net.ParseCIDR(pool)
		if err != nil || s.CNI != api.CNICilium || (before != nil && slices.Contains(before.Spec.Cilium.LoadBalancerIPPools, pool)) {
			continue
		}
		targets = append(targets, target{
			path: fmt.Sprintf("spec.cilium.loadBalancerIpPools[%d]", i), what: "load-balancer pool " + n.String(),
			contains: n.Contains,
			overlaps: func(o *api.KubernetesCluster) string { return poolOverlap(o, n) },
		})
	}
	for _, t := range targets {
		for _, id := range b.env.nodeIDs {
			n := b.env.nodes[id]
			var held, arp []string
			for _, ip := range nodeIPs(n) {
				if t.contains(ip) && !slices.Contains(held, describeHeld(n, ip)) {
					held = append(held, describeHeld(n, ip))
				}
			}
			for _, a := range n.Facts.ARPAnswered {
				if ip := parseAddr(a); ip != nil && t.contains(ip) {
					arp = append(arp, ip.String())
				}
			}
			if len(held) > 0 {
				b.block(CodeAddressInUse, t.path, id, "pick addresses nothing on the network uses (check with `arping`), or free them first",
					"%s is in use: node %s has %s", t.what, id, strings.Join(held, ", "))
			}
			if len(arp) > 0 {
				b.block(CodeAddressInUse, t.path, id, "pick addresses nothing on the network uses (check with `arping`), or free them first",
					"%s is in use: node %s saw %s answer ARP", t.what, id, strings.Join(arp, ", "))
			}
		}
		for _, name := range b.env.storedNames {
			if name == c.Metadata.Name {
				continue
			}
			if why := t.overlaps(b.env.stored[name]); why != "" {
				b.block(CodeAddressInUse, t.path, "", "pick addresses no other cluster uses",
					"%s is in use by cluster %q (%s)", t.what, name, why)
			}
		}
	}
}

func describeHeld(n *api.Node, ip net.IP) string {
	if iface := interfaceHolding(n, ip); iface != "" {
		return ip.String() + " on " + iface
	}
	return ip.String()
}

// usesAddress says how cluster o uses ip, or "" when it does not.
func usesAddress(o *api.KubernetesCluster, ip net.IP) string {
	if o.Spec.HighAvailability.Enabled && net.ParseIP(o.Spec.HighAvailability.VIPAddress).Equal(ip) {
		return "its VIP"
	}
	for _, m := range o.Spec.Members() {
		if net.ParseIP(m.AdvertiseAddress).Equal(ip) {
			return "advertise address of " + m.NodeID
		}
	}
	for _, p := range o.Spec.Cilium.LoadBalancerIPPools {
		if _, n, err := net.ParseCIDR(p); err == nil && n.Contains(ip) {
			return "inside its load-balancer pool " + n.String()
		}
	}
	return ""
}

// poolOverlap says how cluster o overlaps pool, or "" when it does not.
func poolOverlap(o *api.KubernetesCluster, pool *net.IPNet) string {
	if o.Spec.HighAvailability.Enabled {
		if ip := net.ParseIP(o.Spec.HighAvailability.VIPAddress); ip != nil && pool.Contains(ip) {
			return "its VIP " + ip.String()
		}
	}
	for _, p := range o.Spec.Cilium.LoadBalancerIPPools {
		if _, n, err := net.ParseCIDR(p); err == nil && (n.Contains(pool.IP) || pool.Contains(n.IP)) {
			return "its load-balancer pool " + n.String()
		}
	}
	return ""
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		if s := ip.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func listOrNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

func orNever(s string) string {
	if s == "" {
		return "never"
	}
	return s
}
