package render

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// Slots of the clusters sharing a machine. The primary slot keeps the
// reference's names, paths and ports exactly; every other slot gets its own.
const (
	// PrimarySlot is the slot of the first cluster created on a machine.
	PrimarySlot = 0
	// MaxSlots bounds the clusters one machine can hold: slots 0 to
	// MaxSlots-1. It keeps every derived port and router id in its range.
	MaxSlots = 8
	// slotEtcdPortStep separates the etcd ports of two slots.
	slotEtcdPortStep = 100
	// slotPortStep separates the component health ports of two slots.
	slotPortStep = 1000
	// ClustersConfigDir holds the configuration directory of every cluster
	// not in the primary slot, one per cluster name.
	ClustersConfigDir = "/etc/kubernetes/clusters"
)

// Layout is every name a cluster's render puts on a machine: paths, unit and
// task names, ports, the keepalived instance, its virtual router id and the
// nftables table. It is the one place these are derived, from the cluster's
// name and its slot (api.ClusterStatus.Slot); render, plan, rollout,
// orchestrator and the agent all take names from it. Slot 0 (primary) is
// the reference's layout; slot n > 0 puts directories under the cluster's
// name and units, ports, router id and tables under the slot, so two
// clusters in different slots share none of them.
type Layout struct {
	// Slot is the cluster's slot, Cluster its name.
	Slot    int
	Cluster string

	// ConfigDir holds the kubeconfigs and add-on manifests.
	ConfigDir                   string
	PKIDir                      string
	AdminKubeconfig             string
	ControllerManagerKubeconfig string
	SchedulerKubeconfig         string
	KubeletKubeconfig           string
	KubeletConfig               string
	KubeletRootDir              string
	KubeProxyKubeconfig         string
	KubeProxyConfig             string
	KeepalivedConfig            string
	VRRPFirewall                string
	CiliumL2                    string
	Provisioner                 string
	RBAC                        string
	CoreDNS                     string
	KubeDNSService              string
	BridgeCNI                   string
	BridgeRoutes                string
	// EtcdDataSuffix is appended to Options.EtcdDataDir; EtcdRestoreDir
	// holds the snapshots and data of etcd restores.
	EtcdDataSuffix string
	EtcdRestoreDir string
	// KeepalivedPID and KeepalivedVRRPPID are file names under Options.RunDir.
	KeepalivedPID, KeepalivedVRRPPID string

	UnitEtcd, UnitEtcdRestore, UnitEtcdBackup, UnitAPIServer, UnitControllerManager, UnitScheduler string
	UnitKubelet, UnitKubeProxy, UnitKeepalived, UnitCilium                                         string
	TaskFirewallVRRP, TaskCiliumL2, TaskProvisioner, TaskAddons                                    string
	TaskBridgeRoutes, TaskKubeDNS                                                                  string

	EtcdClientPort, EtcdPeerPort, EtcdMetricsPort                                  int
	ControllerManagerPort, SchedulerPort, KubeletHealthzPort, KubeProxyHealthzPort int

	VRRPInstance, VRRPScript, FirewallTable string
	VirtualRouterID                         int
}

// PrimaryLayout is the layout of the primary slot: the reference's names.
func PrimaryLayout() Layout {
	l, _ := LayoutFor("", PrimarySlot)
	return l
}

// LayoutFor is the layout of cluster name in slot. A slot outside
// [0, MaxSlots) fails with ErrInvalid.
func LayoutFor(name string, slot int) (Layout, error) {
	if slot < PrimarySlot || slot >= MaxSlots {
		return Layout{}, fmt.Errorf("layout of cluster %s: slot %d not in [0, %d): %w", name, slot, MaxSlots, ErrInvalid)
	}
	l := Layout{
		Slot: slot, Cluster: name,
		ConfigDir: "/etc/kubernetes", PKIDir: PKIDir,
		AdminKubeconfig: AdminKubeconfigPath, ControllerManagerKubeconfig: ControllerManagerKubeconfigPath,
		SchedulerKubeconfig: SchedulerKubeconfigPath, KubeletKubeconfig: KubeletKubeconfigPath,
		KubeletConfig: KubeletConfigPath, KubeletRootDir: KubeletRootDir,
		KubeProxyKubeconfig: KubeProxyKubeconfigPath, KubeProxyConfig: KubeProxyConfigPath,
		KeepalivedConfig: KeepalivedConfigPath, VRRPFirewall: VRRPFirewallPath,
		CiliumL2: CiliumL2Path, Provisioner: ProvisionerPath, RBAC: RBACPath, CoreDNS: CoreDNSPath,
		KubeDNSService: KubeDNSServicePath, BridgeCNI: BridgeCNIPath, BridgeRoutes: BridgeRoutesPath,
		EtcdRestoreDir: EtcdRestoreDir,
		KeepalivedPID:  "keepalived.pid", KeepalivedVRRPPID: "keepalived-vrrp.pid",

		UnitEtcd: UnitEtcd, UnitEtcdRestore: UnitEtcdRestore, UnitEtcdBackup: UnitEtcdBackup, UnitAPIServer: UnitAPIServer,
		UnitControllerManager: UnitControllerManager, UnitScheduler: UnitScheduler,
		UnitKubelet: UnitKubelet, UnitKubeProxy: UnitKubeProxy, UnitKeepalived: UnitKeepalived, UnitCilium: UnitCilium,
		TaskFirewallVRRP: TaskFirewallVRRP, TaskCiliumL2: TaskCiliumL2, TaskProvisioner: TaskProvisioner,
		TaskAddons: TaskAddons, TaskBridgeRoutes: TaskBridgeRoutes, TaskKubeDNS: TaskKubeDNS,

		EtcdClientPort: EtcdClientPort, EtcdPeerPort: EtcdPeerPort, EtcdMetricsPort: EtcdMetricsPort,
		ControllerManagerPort: ControllerManagerPort, SchedulerPort: SchedulerPort,
		KubeletHealthzPort: KubeletHealthzPort, KubeProxyHealthzPort: KubeProxyHealthzPort,

		VRRPInstance: VRRPInstance, VRRPScript: VRRPScript, FirewallTable: vrrpFirewallTable,
		VirtualRouterID: VirtualRouterID,
	}
	if slot == PrimarySlot {
		return l, nil
	}
	s := strconv.Itoa(slot)
	dir := path.Join(ClustersConfigDir, name)
	l.ConfigDir, l.PKIDir = dir, path.Join(dir, "pki")
	l.AdminKubeconfig = path.Join(dir, "admin.conf")
	l.ControllerManagerKubeconfig = path.Join(dir, "controller-manager.conf")
	l.SchedulerKubeconfig = path.Join(dir, "scheduler.conf")
	l.KubeletKubeconfig = path.Join(dir, "kubelet.conf")
	l.KubeletConfig = path.Join(dir, "kubelet-config.yaml")
	l.KubeletRootDir = KubeletRootDir + "-" + name
	l.KubeProxyKubeconfig = path.Join(dir, "kube-proxy.conf")
	l.KubeProxyConfig = path.Join(dir, "kube-proxy-config.yaml")
	l.KeepalivedConfig = "/etc/keepalived/keepalived-" + name + ".conf"
	l.VRRPFirewall = "/etc/nftables.d/kcore-vrrp-" + name + ".nft"
	l.CiliumL2 = path.Join(dir, "cilium-l2.yaml")
	l.Provisioner = path.Join(dir, "provisioner.yaml")
	l.RBAC = path.Join(dir, "addons/rbac.yaml")
	l.CoreDNS = path.Join(dir, "addons/coredns.yaml")
	l.KubeDNSService = path.Join(dir, "addons/kube-dns-service.yaml")
	l.BridgeCNI = "/etc/cni/net.d/10-kcore-bridge-" + name + ".conflist"
	l.BridgeRoutes = path.Join(dir, "bridge-routes.batch")
	l.EtcdDataSuffix = "-" + name
	l.EtcdRestoreDir = path.Join(EtcdRestoreDir, "clusters", name)
	l.KeepalivedPID, l.KeepalivedVRRPPID = "keepalived-"+name+".pid", "keepalived-vrrp-"+name+".pid"

	unit := func(ref string) string { return "kcore-s" + s + ref[len("kcore"):] }
	for _, p := range []*string{
		&l.UnitEtcd, &l.UnitEtcdRestore, &l.UnitEtcdBackup, &l.UnitAPIServer, &l.UnitControllerManager, &l.UnitScheduler,
		&l.UnitKubelet, &l.UnitKubeProxy, &l.UnitKeepalived, &l.UnitCilium,
		&l.TaskFirewallVRRP, &l.TaskCiliumL2, &l.TaskProvisioner, &l.TaskAddons, &l.TaskBridgeRoutes, &l.TaskKubeDNS,
	} {
		*p = unit(*p)
	}
	l.EtcdClientPort += slot * slotEtcdPortStep
	l.EtcdPeerPort += slot * slotEtcdPortStep
	l.EtcdMetricsPort += slot * slotEtcdPortStep
	l.ControllerManagerPort += slot * slotPortStep
	l.SchedulerPort += slot * slotPortStep
	l.KubeletHealthzPort += slot * slotPortStep
	l.KubeProxyHealthzPort += slot * slotPortStep
	l.VRRPInstance += "_" + s
	l.VRRPScript += "_" + s
	l.FirewallTable += "_" + s
	l.VirtualRouterID += slot
	return l, nil
}

// ClusterLayout is the layout of c in its recorded slot
// (api.ClusterStatus.Slot); a slot out of range, which Render refuses,
// gives the primary layout.
func ClusterLayout(c *api.KubernetesCluster) Layout {
	l, err := LayoutFor(c.Metadata.Name, c.Status.Slot)
	if err != nil {
		l, _ = LayoutFor(c.Metadata.Name, PrimarySlot)
	}
	return l
}

// PKI is the path of file name under the layout's PKI directory.
func (l Layout) PKI(name string) string { return l.PKIDir + "/" + name }

// EtcdRestoreSnapshot is where a restore's snapshot is written.
func (l Layout) EtcdRestoreSnapshot(gen int) string {
	return l.EtcdRestoreDir + "/" + strconv.Itoa(gen) + "/snapshot.db"
}

// Units are every unit and task name of the layout.
func (l Layout) Units() []string {
	return []string{
		l.UnitEtcd, l.UnitEtcdRestore, l.UnitEtcdBackup, l.UnitAPIServer, l.UnitControllerManager, l.UnitScheduler,
		l.UnitKubelet, l.UnitKubeProxy, l.UnitKeepalived, l.UnitCilium,
		l.TaskFirewallVRRP, l.TaskCiliumL2, l.TaskProvisioner, l.TaskAddons, l.TaskBridgeRoutes, l.TaskKubeDNS,
	}
}

// Ports are every port the layout's components listen on besides the API
// server's (the manifest's apiServerEndpoint port).
func (l Layout) Ports() []int {
	return []int{
		l.EtcdClientPort, l.EtcdPeerPort, l.EtcdMetricsPort,
		l.ControllerManagerPort, l.SchedulerPort, l.KubeletHealthzPort, l.KubeProxyHealthzPort,
	}
}

// Files are every fixed file path of the layout (the PKI directory's files
// and restore snapshots aside).
func (l Layout) Files() []string {
	return []string{
		l.AdminKubeconfig, l.ControllerManagerKubeconfig, l.SchedulerKubeconfig, l.KubeletKubeconfig,
		l.KubeletConfig, l.KubeProxyKubeconfig, l.KubeProxyConfig, l.KeepalivedConfig, l.VRRPFirewall,
		l.CiliumL2, l.Provisioner, l.RBAC, l.CoreDNS, l.KubeDNSService, l.BridgeCNI, l.BridgeRoutes,
	}
}

// Reference maps a unit or task name or a file path of the layout to the
// primary layout's name of the same thing, so callers that key on the
// reference's names (plan components, rollout order) work in every slot.
// Anything else is returned unchanged.
func (l Layout) Reference(name string) string {
	ref := PrimaryLayout()
	for i, n := range l.Units() {
		if n == name {
			return ref.Units()[i]
		}
	}
	for i, n := range l.Files() {
		if n == name {
			return ref.Files()[i]
		}
	}
	if rest, ok := strings.CutPrefix(name, l.PKIDir+"/"); ok {
		return ref.PKI(rest)
	}
	return name
}
