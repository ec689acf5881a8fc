package api

import (
	"strings"
	"testing"
)

// issueKeys renders issues as "error spec.x: message" lines for comparison.
func issueKeys(is Issues) []string {
	out := make([]string, len(is))
	for i, x := range is {
		out[i] = string(x.Severity) + " " + x.Path
	}
	return out
}

// checkIssues compares the severities and paths exactly, and that each
// message contains the matching fragment.
func checkIssues(t *testing.T, got Issues, want []string, fragments []string) {
	t.Helper()
	if strings.Join(issueKeys(got), "\n") != strings.Join(want, "\n") {
		t.Errorf("issues:\n%v\nwant:\n%s", got, strings.Join(want, "\n"))
		return
	}
	for i, f := range fragments {
		if f != "" && !strings.Contains(got[i].Message, f) {
			t.Errorf("issue %d message %q lacks %q", i, got[i].Message, f)
		}
	}
}

func haCluster(c *KubernetesCluster) {
	c.Spec.APIServerEndpoint = "192.168.40.200:6443"
	c.Spec.HighAvailability = HASpec{Enabled: true, VIPAddress: "192.168.40.200", VIPInterface: "enp6s0"}
}

func withVolumes(mode string, vols ...VolumeSpec) func(*KubernetesCluster) {
	return func(c *KubernetesCluster) {
		c.Spec.LocalProvisioner = LocalProvisionerSpec{Enabled: true, Mode: mode, Volumes: vols}
	}
}

func TestClusterValidate(t *testing.T) {
	vol := VolumeSpec{Name: "data", NodeID: "node-2", StorageClass: "lvm", SizeBytes: 1 << 30}
	tests := []struct {
		name      string
		mutate    func(*KubernetesCluster)
		want      []string
		fragments []string
	}{
		{"valid", func(*KubernetesCluster) {}, nil, nil},
		{"valid with HA, pools and volumes", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.224/29"}
			withVolumes("", vol)(c)
		}, nil, nil},
		{"name not a DNS label", func(c *KubernetesCluster) { c.Metadata.Name = "Lab" }, []string{"error metadata.name"}, []string{"not a DNS label"}},
		{"ca generation negative", func(c *KubernetesCluster) { c.Spec.CAGeneration = -1 }, []string{"error spec.caGeneration"}, []string{"out of range"}},
		{"ca generation past the bound", func(c *KubernetesCluster) { c.Spec.CAGeneration = MaxCAGeneration + 1 }, []string{"error spec.caGeneration"}, []string{"out of range"}},
		{"ca generation at the bound", func(c *KubernetesCluster) { c.Spec.CAGeneration = MaxCAGeneration }, nil, nil},
		{"name required", func(c *KubernetesCluster) { c.Metadata.Name = "" }, []string{"error metadata.name"}, []string{"required"}},
		{"node id not a DNS label", func(c *KubernetesCluster) { c.Spec.WorkerNodes[0].NodeID = "node_2" },
			[]string{"error spec.workerNodes[0].nodeId"}, []string{"DNS label"}},
		{"duplicate node id across lists", func(c *KubernetesCluster) { c.Spec.WorkerNodes[0].NodeID = "node-1" },
			[]string{"error spec.workerNodes[0].nodeId"}, []string{`duplicate node id "node-1" (also spec.controlPlaneNodes[0])`}},
		{"duplicate address", func(c *KubernetesCluster) { c.Spec.WorkerNodes[0].AdvertiseAddress = "192.168.40.1" },
			[]string{"error spec.workerNodes[0].advertiseAddress"}, []string{"also used by spec.controlPlaneNodes[0]"}},
		{"no control plane", func(c *KubernetesCluster) { c.Spec.ControlPlaneNodes = nil },
			[]string{"error spec.controlPlaneNodes"}, []string{"at least one"}},
		{"no workers", func(c *KubernetesCluster) { c.Spec.WorkerNodes = nil },
			[]string{"error spec.workerNodes"}, []string{"scheduleOnControlPlane"}},
		{"no workers with scheduleOnControlPlane", func(c *KubernetesCluster) {
			c.Spec.WorkerNodes = nil
			c.Spec.ScheduleOnControlPlane = true
		}, nil, nil},
		{"even control planes warn", func(c *KubernetesCluster) {
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, ClusterNode{NodeID: "node-3", AdvertiseAddress: "192.168.40.3"})
		}, []string{"warning spec.controlPlaneNodes"}, []string{"odd number"}},
		{"initialCluster warns", func(c *KubernetesCluster) { c.Spec.InitialCluster = "node-1=https://192.168.40.1:2380" },
			[]string{"warning spec.initialCluster"}, []string{"ignored on create"}},
		{"unparsable CIDRs", func(c *KubernetesCluster) {
			c.Spec.ClusterCIDR = "10.244.0.0"
			c.Spec.ServiceCIDR = "fd00::/64"
		}, []string{"error spec.clusterCidr", "error spec.serviceCidr"}, []string{"not an IPv4 CIDR", "not an IPv4 CIDR"}},
		{"cluster CIDR with host bits", func(c *KubernetesCluster) { c.Spec.ClusterCIDR = "10.244.1.0/16" },
			[]string{"error spec.clusterCidr"}, []string{"did you mean 10.244.0.0/16?"}},
		{"required networks", func(c *KubernetesCluster) {
			c.Spec.ClusterCIDR, c.Spec.ServiceCIDR = "", ""
		}, []string{"error spec.clusterCidr", "error spec.serviceCidr"}, []string{"required", "required"}},
		{"unparsable addresses", func(c *KubernetesCluster) {
			c.Spec.ClusterDNS = "10.96.0.300"
			c.Spec.WorkerNodes[0].AdvertiseAddress = "fe80::1"
		}, []string{"error spec.workerNodes[0].advertiseAddress", "error spec.clusterDns"}, []string{"not an IPv4 address", "not an IPv4 address"}},
		{"clusterDns outside serviceCidr", func(c *KubernetesCluster) { c.Spec.ClusterDNS = "10.244.0.10" },
			[]string{"error spec.clusterDns"}, []string{"outside serviceCidr 10.96.0.0/12"}},
		{"cluster and service CIDRs overlap", func(c *KubernetesCluster) {
			c.Spec.ServiceCIDR, c.Spec.ClusterDNS = "10.244.128.0/20", "10.244.128.10"
		}, []string{"error spec.serviceCidr"}, []string{"overlaps spec.clusterCidr"}},
		{"pool overlaps a network and another pool", func(c *KubernetesCluster) {
			c.Spec.Cilium.LoadBalancerIPPools = []string{"10.96.1.0/24", "192.168.50.0/24", "192.168.50.128/25"}
		}, []string{"error spec.cilium.loadBalancerIpPools[0]", "error spec.cilium.loadBalancerIpPools[2]"},
			[]string{"overlaps spec.serviceCidr", "overlaps spec.cilium.loadBalancerIpPools[1]"}},
		{"pool with host bits warns", func(c *KubernetesCluster) { c.Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.220/29"} },
			[]string{"warning spec.cilium.loadBalancerIpPools[0]"}, []string{"the pool is all of 192.168.40.216/29"}},
		{"unparsable pool", func(c *KubernetesCluster) { c.Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.220-230"} },
			[]string{"error spec.cilium.loadBalancerIpPools[0]"}, []string{"not an IPv4 CIDR"}},
		{"node address in a network", func(c *KubernetesCluster) { c.Spec.WorkerNodes[0].AdvertiseAddress = "10.96.0.5" },
			[]string{"error spec.workerNodes[0].advertiseAddress"}, []string{"overlaps spec.serviceCidr"}},
		{"VIP in clusterCidr", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.HighAvailability.VIPAddress = "10.244.0.1"
			c.Spec.APIServerEndpoint = "10.244.0.1:6443"
		}, []string{"error spec.highAvailability.vipAddress"}, []string{"overlaps spec.clusterCidr"}},
		{"VIP in a load-balancer pool", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.192/27"}
		}, []string{"error spec.highAvailability.vipAddress"}, []string{"inside the load-balancer pool spec.cilium.loadBalancerIpPools[0]"}},
		{"VIP is a node address", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.HighAvailability.VIPAddress = "192.168.40.2"
			c.Spec.APIServerEndpoint = "192.168.40.2:6443"
		}, []string{"error spec.highAvailability.vipAddress"}, []string{"also the address of spec.workerNodes[0].advertiseAddress"}},
		{"endpoint required", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = "" },
			[]string{"error spec.apiServerEndpoint"}, []string{"required"}},
		{"endpoint not host:port", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = "192.168.40.1" },
			[]string{"error spec.apiServerEndpoint"}, []string{"not host:port"}},
		{"endpoint with scheme", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = "https://192.168.40.1:6443" },
			[]string{"error spec.apiServerEndpoint"}, []string{"not host:port"}},
		{"endpoint without host", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = ":6443" },
			[]string{"error spec.apiServerEndpoint"}, []string{"not host:port"}},
		{"endpoint port not a number", func(c *KubernetesCluster) { c.Spec.APIServerEndpoint = "192.168.40.1:99999" },
			[]string{"error spec.apiServerEndpoint"}, []string{"from 1 to 65535"}},
		{"endpoint host not the VIP", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.APIServerEndpoint = "192.168.40.1:6443"
		}, []string{"error spec.apiServerEndpoint"}, []string{"must be the VIP 192.168.40.200"}},
		{"HA without VIP fields", func(c *KubernetesCluster) { c.Spec.HighAvailability.Enabled = true },
			[]string{"error spec.highAvailability.vipAddress", "error spec.highAvailability.vipInterface"}, []string{"required when", "required when"}},
		{"HA with bad VIP", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.HighAvailability.VIPAddress = "vip"
		}, []string{"error spec.highAvailability.vipAddress", "error spec.apiServerEndpoint"}, []string{"not an IPv4 address", ""}},
		{"bad interface names", func(c *KubernetesCluster) {
			haCluster(c)
			c.Spec.HighAvailability.VIPInterface = "br 0"
			c.Spec.ControlPlaneNodes[0].Iface = "a-very-long-interface"
		}, []string{"error spec.controlPlaneNodes[0].iface", "error spec.highAvailability.vipInterface"}, []string{"interface name", "interface name"}},
		{"bad cni", func(c *KubernetesCluster) { c.Spec.CNI = "flannel" }, []string{"error spec.cni"}, []string{"not one of cilium, bridge"}},
		{"bridge ignores pools", func(c *KubernetesCluster) {
			c.Spec.APIServerEndpoint = "192.168.40.1:7443"
			c.Spec.Cilium.LoadBalancerIPPools = []string{"192.168.40.224/29"}
		}, []string{"warning spec.cilium.loadBalancerIpPools"}, []string{"bridge CNI"}},
		{"cilium settings", func(c *KubernetesCluster) {
			c.Spec.Cilium = CiliumSpec{Mode: "tunnel", Tunnel: "disabled", MTU: 100}
		}, []string{"error spec.cilium.tunnel", "error spec.cilium.mtu"}, []string{"vxlan or geneve", "576..9216"}},
		{"cilium unknown values", func(c *KubernetesCluster) {
			c.Spec.Cilium = CiliumSpec{Mode: "fast", Tunnel: "gre"}
		}, []string{"error spec.cilium.mode", "error spec.cilium.tunnel"}, []string{"native-routing, tunnel", "disabled, vxlan, geneve"}},
		{"native routing with a tunnel", func(c *KubernetesCluster) { c.Spec.Cilium.Tunnel = "vxlan" },
			[]string{"error spec.cilium.tunnel"}, []string{"must be disabled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			tt.mutate(c)
			c.Default()
			checkIssues(t, c.Validate(), tt.want, tt.fragments)
		})
	}
}
