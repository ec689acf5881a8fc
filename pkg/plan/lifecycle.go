package plan

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// createSteps brings up a new cluster: per node identity, firewall, etcd,
// control plane, keepalived, kubelet and volumes, then the add-ons on the
// bootstrap control plane once the API answers. Volumes that reuse (the
// cluster a replace tears down) kept on disk are reused, not created.
func (b *builder) createSteps(s *stepper, c, reuse *api.KubernetesCluster) {
	sp := c.Spec
	cps := memberIDs(sp.ControlPlaneNodes)
	ha := sp.HighAvailability
	port := apiPort(sp.APIServerEndpoint)
	for i, m := range sp.ControlPlaneNodes {
		id := m.NodeID
		s.add(id, ComponentCertificates, StepIssue, DisruptionNone,
			fmt.Sprintf("issue etcd peer/server, kube-apiserver (SANs %s), controller-manager, scheduler and kubelet certificates; write /etc/kubernetes/admin.conf (server https://%s)", apiSANs(c, m), sp.APIServerEndpoint))
		fw := fmt.Sprintf("accept etcd 2379-2380 from the control planes, the API on %s and kubelet 10250", port)
		if ha.Enabled {
			fw += "; accept VRRP (protocol 112) and mark it NOTRACK"
		}
		s.add(id, ComponentFirewall, StepCreate, DisruptionNone, fw)
		if i == 0 {
			for _, m := range cps {
				s.etcd.add(m, false)
			}
			s.forming = true
		}
		s.etcd.add(id, b.env.ready(id))
		etcdDetail := fmt.Sprintf("start etcd member %s of the initial cluster %s", id, strings.Join(cps, ", "))
		if i == 0 {
			etcdDetail += " (bootstrap node)"
		}
		s.add(id, ComponentEtcd, StepStart, DisruptionNone, etcdDetail)
		s.add(id, ComponentAPIServer, StepStart, DisruptionNone, fmt.Sprintf("serve https://%s:%s against the local etcd member", m.AdvertiseAddress, port))
		s.add(id, ComponentControllerManager, StepStart, DisruptionNone, "")
		s.add(id, ComponentScheduler, StepStart, DisruptionNone, "")
		if ha.Enabled {
			s.add(id, ComponentKeepalived, StepStart, DisruptionNone, keepalivedDetail(c, m))
		}
		s.add(id, ComponentKubelet, StepStart, DisruptionNone, kubeletDetail(c, m, true))
		b.volumeCreateSteps(s, c, reuse, id)
	}
	for _, m := range sp.WorkerNodes {
		id := m.NodeID
		s.add(id, ComponentCertificates, StepIssue, DisruptionNone, "issue the kubelet client and serving certificates")
		s.add(id, ComponentFirewall, StepCreate, DisruptionNone, "accept kubelet 10250 from the control planes")
		s.add(id, ComponentKubelet, StepStart, DisruptionNone, kubeletDetail(c, m, false))
		b.volumeCreateSteps(s, c, reuse, id)
	}
	b.addonSteps(s, c)
}

// addonSteps installs Cilium and the local-path provisioner from the bootstrap control plane.
func (b *builder) addonSteps(s *stepper, c *api.KubernetesCluster) {
	sp := c.Spec
	boot := firstCP(c)
	if boot == "" {
		return
	}
	if sp.CNI == api.CNICilium {
		d := fmt.Sprintf("unit kcore-kubernetes-cilium runs `cilium install` once the API is ready (%s, MTU %d, tunnel %s, devices %s); agents run on every node",
			sp.Cilium.Mode, sp.Cilium.MTU, sp.Cilium.Tunnel, strings.Join(ifaces(c), ","))
		if len(sp.Cilium.LoadBalancerIPPools) > 0 {
			d += fmt.Sprintf("; apply pool and L2 policy kcore (%s) from /etc/kubernetes/cilium-l2.yaml", strings.Join(sp.Cilium.LoadBalancerIPPools, ", "))
		}
		s.add(boot, ComponentCilium, StepInstall, DisruptionNone, d)
	}
	if lp := sp.LocalProvisioner; lp.Enabled && lp.Mode == api.ProvisionerModeShared {
		s.add(boot, ComponentProvisioner, StepInstall, DisruptionNone, provisionerDetail(c))
	}
}

func provisionerDetail(c *api.KubernetesCluster) string {
	lp := c.Spec.LocalProvisioner
	var paths []string
	for _, v := range lp.Volumes {
		paths = append(paths, v.NodeID+":"+v.MountPath)
	}
	return fmt.Sprintf("unit kcore-kubernetes-provisioner applies rancher/local-path-provisioner:v0.0.30 from /etc/kubernetes/provisioner.yaml (StorageClass %s, paths %s)", lp.StorageClassName, listOrNone(paths))
}

func (b *builder) volumeCreateSteps(s *stepper, c, reuse *api.KubernetesCluster, node string) {
	for _, v := range c.Spec.LocalProvisioner.Volumes {
		if v.NodeID != node {
			continue
		}
		old, kept := api.VolumeSpec{}, false
		if reuse != nil {
			old, kept = findVolume(reuse, v.NodeID, v.Name)
		}
		switch {
		case kept && v.SizeBytes > old.SizeBytes:
			s.add(node, volumeComponent(v.Name), StepGrow, DisruptionVolumeGrow, "reuse the kept volume: "+growDetail(c, v, old.SizeBytes))
		case kept:
			s.add(node, volumeComponent(v.Name), StepKeep, DisruptionNone, fmt.Sprintf("reuse the kept volume %s with its data, mount at %s", api.VolumeName(c.Metadata.Name, v.NodeID, v.Name), orDash(v.MountPath)))
		default:
			s.add(node, volumeComponent(v.Name), StepCreate, DisruptionNone, b.volumeCreateDetail(c, v))
		}
	}
}

func (b *builder) volumeCreateDetail(c *api.KubernetesCluster, v api.VolumeSpec) string {
	name := api.VolumeName(c.Metadata.Name, v.NodeID, v.Name)
	where := v.VolumeGroup
	if n := b.env.nodes[v.NodeID]; n != nil {
		if be, code, _ := backendFor(n, v); code == "" {
			where = be.Name
		}
	}
	if v.Role == api.VolumeRolePool {
		return fmt.Sprintf("create LVM thin pool %s (%s) in %s; not mounted, no provisioner", name, humanBytes(v.SizeBytes), orLargest(where, v))
	}
	kind, dev := "LVM logical volume", fmt.Sprintf("/dev/%s/%s", where, name)
	if v.StorageClass == api.StorageClassZFS {
		kind, dev = "ZFS zvol", fmt.Sprintf("/dev/zvol/%s/%s", where, name)
	}
	if where == "" {
		dev = name + " in " + orLargest(where, v)
	}
	return fmt.Sprintf("create %s %s (%s), format %s, mount at %s", kind, dev, humanBytes(v.SizeBytes), v.FSType, v.MountPath)
}

// teardownSteps stops a cluster: workers first, then the control planes in
// reverse order so the bootstrap node goes last. Volumes are kept on disk.
func (b *builder) teardownSteps(s *stepper, c *api.KubernetesCluster) {
	sp := c.Spec
	for _, m := range sp.WorkerNodes {
		s.add(m.NodeID, ComponentKubelet, StepStop, DisruptionRestartUnit, "stop kubelet; the node's pods stop")
		b.hostCleanupSteps(s, c, m.NodeID)
	}
	for i := len(sp.ControlPlaneNodes) - 1; i >= 0; i-- {
		id := sp.ControlPlaneNodes[i].NodeID
		if sp.HighAvailability.Enabled {
			d := "stop keepalived; the VIP moves to a remaining control plane if this node holds it"
			if i == 0 {
				d = "stop keepalived; VIP " + sp.HighAvailability.VIPAddress + " is released"
			}
			s.add(id, ComponentKeepalived, StepStop, DisruptionVIPMove, d)
		}
		s.add(id, ComponentScheduler, StepStop, DisruptionRestartUnit, "")
		s.add(id, ComponentControllerManager, StepStop, DisruptionRestartUnit, "")
		s.add(id, ComponentAPIServer, StepStop, DisruptionRestartUnit, "")
		s.etcd.stop(id)
		s.add(id, ComponentEtcd, StepStop, DisruptionEtcdMembership, "stop etcd and remove its data directory")
		s.add(id, ComponentKubelet, StepStop, DisruptionRestartUnit, "stop kubelet; the node's pods stop")
		b.hostCleanupSteps(s, c, id)
	}
}

// hostCleanupSteps removes what a cluster left on a host, keeping volumes.
func (b *builder) hostCleanupSteps(s *stepper, c *api.KubernetesCluster, node string) {
	if c.Spec.CNI == api.CNICilium {
		s.add(node, ComponentCilium, StepRemove, DisruptionNone, "remove Cilium's BPF pins and interfaces so the host can run another Cilium")
	}
	s.add(node, ComponentCertificates, StepRemove, DisruptionNone, "remove the node's certificates and kubeconfigs")
	s.add(node, ComponentFirewall, StepRemove, DisruptionNone, "remove the cluster's firewall rules")
	for _, v := range c.Spec.LocalProvisioner.Volumes {
		if v.NodeID == node {
			s.add(node, volumeComponent(v.Name), StepKeep, DisruptionNone,
				fmt.Sprintf("unmount %s and keep %s (%s) with its data; remove it by hand when no longer needed", orDash(v.MountPath), api.VolumeName(c.Metadata.Name, v.NodeID, v.Name), humanBytes(v.SizeBytes)))
		}
	}
}

func keepalivedDetail(c *api.KubernetesCluster, m api.ClusterNode) string {
	ha := c.Spec.HighAvailability
	var peers []string
	for _, p := range c.Spec.ControlPlaneNodes {
		if p.NodeID != m.NodeID {
			peers = append(peers, p.AdvertiseAddress)
		}
	}
	return fmt.Sprintf("instance kcore_api, VIP %s/24 on %s, priority %d, unicast peers %s", ha.VIPAddress, ha.VIPInterface, priority(m.AdvertiseAddress), listOrNone(peers))
}

func kubeletDetail(c *api.KubernetesCluster, m api.ClusterNode, controlPlane bool) string {
	d := fmt.Sprintf("register %s with node IP %s, cluster DNS %s", m.NodeID, m.AdvertiseAddress, c.Spec.ClusterDNS)
	if controlPlane && !c.Spec.ScheduleOnControlPlane {
		d += ", taint node-role.kubernetes.io/control-plane:NoSchedule"
	}
	return d
}

// priority is keepalived's priority: the last octet of the address, or 100 when it is 0 or 255.
func priority(addr string) int {
	ip := net.ParseIP(addr).To4()
	if ip == nil || ip[3] == 0 || ip[3] == 255 {
		return 100
	}
	return int(ip[3])
}

// apiSANs lists the addresses a control plane's API server certificate holds.
func apiSANs(c *api.KubernetesCluster, m api.ClusterNode) string {
	sans := []string{m.AdvertiseAddress}
	if host := apiHost(c.Spec.APIServerEndpoint); host != "" && host != m.AdvertiseAddress {
		sans = append(sans, host)
	}
	return strings.Join(sans, ", ")
}

func apiHost(endpoint string) string {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return ""
	}
	return host
}

func apiPort(endpoint string) string {
	_, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return api.PrimaryAPIPort
	}
	return port
}

// ifaces lists the distinct member interfaces, Cilium's devices and L2 policy interfaces.
func ifaces(c *api.KubernetesCluster) []string {
	var out []string
	for _, m := range c.Spec.Members() {
		if !slices.Contains(out, m.Iface) {
			out = append(out, m.Iface)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orLargest names the backend a volume goes to when the node's facts are unknown.
func orLargest(where string, v api.VolumeSpec) string {
	if where == "" {
		return "the largest " + v.StorageClass + " backend"
	}
	return where
}
