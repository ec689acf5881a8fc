package api

import (
	"net"
	"strconv"
	"strings"
)

// Validate checks a defaulted cluster and returns every error and warning with
// its field path. Call Default first.
func (c *KubernetesCluster) Validate() Issues {
	v := &collector{}
	checkName(v, "metadata.name", c.Metadata.Name)
	s := &c.Spec
	validateMembers(v, s)
	nets := validateNetworks(v, s)
	validateEndpoint(v, s)
	validateCilium(v, s)
	validateAddressesDisjoint(v, s, nets)
	validateProvisioner(v, s)
	validateExtraArgs(v, s)
	validateRegistryMirrors(v, s.RegistryMirrors)
	validateEtcdBackup(v, s.EtcdBackup)
	if s.CAGeneration < 0 || s.CAGeneration > MaxCAGeneration {
		v.errorf("spec.caGeneration", "%d is out of range: a generation is 0 to %d", s.CAGeneration, MaxCAGeneration)
	}
	if s.InitialCluster != "" {
		v.warnf("spec.initialCluster", "ignored on create: etcd membership comes from controlPlaneNodes, and the first entry bootstraps")
	}
	return v.issues
}

func validateMembers(v *collector, s *ClusterSpec) {
	if len(s.ControlPlaneNodes) == 0 {
		v.errorf("spec.controlPlaneNodes", "at least one control-plane node is required")
	}
	if len(s.WorkerNodes) == 0 && !s.ScheduleOnControlPlane && len(s.ControlPlaneNodes) > 0 {
		v.errorf("spec.workerNodes", "required unless scheduleOnControlPlane is true: no node could run pods")
	}
	if n := len(s.ControlPlaneNodes); n > 0 && n%2 == 0 {
		v.warnf("spec.controlPlaneNodes", "%d control-plane nodes tolerate no more failures than %d; use an odd number", n, n-1)
	}
	seenID := map[string]string{}
	seenAddr := map[string]string{}
	check := func(list string, nodes []ClusterNode) {
		for i, n := range nodes {
			p := index(list, i)
			if checkNodeID(v, p+".nodeId", n.NodeID) {
				if prev, ok := seenID[n.NodeID]; ok {
					v.errorf(p+".nodeId", "duplicate node id %q (also %s)", n.NodeID, prev)
				} else {
					seenID[n.NodeID] = p
				}
			}
			if ip := parseIPv4(v, p+".advertiseAddress", n.AdvertiseAddress); ip != nil {
				if prev, ok := seenAddr[ip.String()]; ok {
					v.errorf(p+".advertiseAddress", "address %s is also used by %s", ip, prev)
				} else {
					seenAddr[ip.String()] = p
				}
			}
			checkIfaceName(v, p+".iface", n.Iface)
		}
	}
	check("spec.controlPlaneNodes", s.ControlPlaneNodes)
	check("spec.workerNodes", s.WorkerNodes)
}

// namedNet is a parsed network with the field path it came from.
type namedNet struct {
	path string
	net  *net.IPNet
}

func validateNetworks(v *collector, s *ClusterSpec) []namedNet {
	var nets []namedNet
	if n := parseCIDR(v, "spec.clusterCidr", s.ClusterCIDR); n != nil {
		nets = append(nets, namedNet{"spec.clusterCidr", n})
	}
	svc := parseCIDR(v, "spec.serviceCidr", s.ServiceCIDR)
	if svc != nil {
		nets = append(nets, namedNet{"spec.serviceCidr", svc})
	}
	if dns := parseIPv4(v, "spec.clusterDns", s.ClusterDNS); dns != nil && svc != nil && !svc.Contains(dns) {
		v.errorf("spec.clusterDns", "%s is outside serviceCidr %s", dns, svc)
	}
	for i, p := range s.Cilium.LoadBalancerIPPools {
		path := index("spec.cilium.loadBalancerIpPools", i)
		if n := parsePoolCIDR(v, path, p); n != nil {
			nets = append(nets, namedNet{path, n})
		}
	}
	for i := range nets {
		for j := 0; j < i; j++ {
			if overlaps(nets[i].net, nets[j].net) {
				v.errorf(nets[i].path, "%s overlaps %s (%s)", nets[i].net, nets[j].path, nets[j].net)
			}
		}
	}
	return nets
}

func validateEndpoint(v *collector, s *ClusterSpec) {
	const p = "spec.apiServerEndpoint"
	ha := s.HighAvailability
	if ha.Enabled {
		if ha.VIPAddress == "" {
			v.errorf("spec.highAvailability.vipAddress", "required when highAvailability.enabled is true")
		} else {
			parseIPv4(v, "spec.highAvailability.vipAddress", ha.VIPAddress)
		}
		if ha.VIPInterface == "" {
			v.errorf("spec.highAvailability.vipInterface", "required when highAvailability.enabled is true")
		} else {
			checkIfaceName(v, "spec.highAvailability.vipInterface", ha.VIPInterface)
		}
	}
	if s.APIServerEndpoint == "" {
		v.errorf(p, "required: host:port of the API, e.g. 192.168.40.200:6443")
		return
	}
	host, port, err := net.SplitHostPort(s.APIServerEndpoint)
	if err != nil || host == "" || strings.Contains(s.APIServerEndpoint, "/") {
		v.errorf(p, "%q is not host:port, e.g. 192.168.40.200:6443 (no scheme, no path)", s.APIServerEndpoint)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		v.errorf(p, "port %q is not a number from 1 to 65535", port)
	}
	if ha.Enabled && ha.VIPAddress != "" && host != ha.VIPAddress {
		v.errorf(p, "host %s must be the VIP %s when highAvailability is enabled", host, ha.VIPAddress)
	}
}

func validateCilium(v *collector, s *ClusterSpec) {
	switch s.CNI {
	case CNICilium, CNIBridge:
	default:
		v.errorf("spec.cni", "%q is not one of cilium, bridge", s.CNI)
		return
	}
	if s.CNI == CNIBridge {
		if len(s.Cilium.LoadBalancerIPPools) > 0 {
			v.warnf("spec.cilium.loadBalancerIpPools", "ignored: the cluster uses bridge CNI (API port other than 6443), so there is no Cilium L2 load balancer")
		}
		return
	}
	c := s.Cilium
	switch c.Mode {
	case "native-routing", "tunnel":
	default:
		v.errorf("spec.cilium.mode", "%q is not one of native-routing, tunnel", c.Mode)
	}
	switch c.Tunnel {
	case "disabled", "vxlan", "geneve":
	default:
		v.errorf("spec.cilium.tunnel", "%q is not one of disabled, vxlan, geneve", c.Tunnel)
	}
	if c.Mode == "tunnel" && c.Tunnel == "disabled" {
		v.errorf("spec.cilium.tunnel", "must be vxlan or geneve when mode is tunnel")
	}
	if c.Mode == "native-routing" && c.Tunnel != "disabled" && c.Tunnel != "" {
		v.errorf("spec.cilium.tunnel", "must be disabled when mode is native-routing")
	}
	if c.MTU < 576 || c.MTU > 9216 {
		v.errorf("spec.cilium.mtu", "%d is outside 576..9216", c.MTU)
	}
}

// validateAddressesDisjoint checks that the VIP and node addresses sit in none
// of the cluster's networks and that the VIP is no node's address.
func validateAddressesDisjoint(v *collector, s *ClusterSpec, nets []namedNet) {
	type addr struct {
		path string
		ip   net.IP
	}
	var addrs []addr
	if s.HighAvailability.Enabled {
		if ip := net.ParseIP(s.HighAvailability.VIPAddress).To4(); ip != nil {
			addrs = append(addrs, addr{"spec.highAvailability.vipAddress", ip})
		}
	}
	for _, list := range []struct {
		path  string
		nodes []ClusterNode
	}{{"spec.controlPlaneNodes", s.ControlPlaneNodes}, {"spec.workerNodes", s.WorkerNodes}} {
		for i, n := range list.nodes {
			if ip := net.ParseIP(n.AdvertiseAddress).To4(); ip != nil {
				addrs = append(addrs, addr{index(list.path, i) + ".advertiseAddress", ip})
			}
		}
	}
	for _, a := range addrs {
		for _, n := range nets {
			if n.net.Contains(a.ip) {
				what := "overlaps"
				if a.path == "spec.highAvailability.vipAddress" && strings.HasPrefix(n.path, "spec.cilium.loadBalancerIpPools") {
					what = "is inside the load-balancer pool"
				}
				v.errorf(a.path, "%s %s %s (%s)", a.ip, what, n.path, n.net)
			}
		}
	}
	if len(addrs) > 0 && addrs[0].path == "spec.highAvailability.vipAddress" {
		for _, a := range addrs[1:] {
			if a.ip.Equal(addrs[0].ip) {
				v.errorf(addrs[0].path, "%s is also the address of %s; the VIP must be a free address", a.ip, a.path)
			}
		}
	}
}
