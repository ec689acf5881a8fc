package render

// Paths of everything rendered, as on the node.
const (
	PKIDir                          = "/etc/kubernetes/pki"
	AdminKubeconfigPath             = "/etc/kubernetes/admin.conf"
	ControllerManagerKubeconfigPath = "/etc/kubernetes/controller-manager.conf"
	SchedulerKubeconfigPath         = "/etc/kubernetes/scheduler.conf"
	KubeletKubeconfigPath           = "/etc/kubernetes/kubelet.conf"
	KubeletConfigPath               = "/var/lib/kubelet/config.yaml"
	KubeletRootDir                  = "/var/lib/kubelet"
	KubeProxyKubeconfigPath         = "/etc/kubernetes/kube-proxy.conf"
	KubeProxyConfigPath             = "/var/lib/kube-proxy/config.yaml"
	KeepalivedConfigPath            = "/etc/keepalived/keepalived.conf"
	VRRPFirewallPath                = "/etc/nftables.d/kcore-vrrp.nft"
	CiliumL2Path                    = "/etc/kubernetes/cilium-l2.yaml"
	// CiliumChartDir holds Cilium's Helm chart, of the release the node
	// runs, installed with the node's binaries.
	CiliumChartDir     = "/usr/share/kcore/charts/cilium"
	ProvisionerPath    = "/etc/kubernetes/provisioner.yaml"
	RBACPath           = "/etc/kubernetes/addons/rbac.yaml"
	CoreDNSPath        = "/etc/kubernetes/addons/coredns.yaml"
	KubeDNSServicePath = "/etc/kubernetes/addons/kube-dns-service.yaml"
	BridgeCNIPath      = "/etc/cni/net.d/10-kcore-bridge.conflist"
	BridgeRoutesPath   = "/etc/kubernetes/bridge-routes.batch"
	// CNIIPAMDir is where the bridge CNI's host-local IPAM keeps a node's
	// address reservations and its allocation cursor (host-local's own
	// default, rendered so that nodes sharing a machine, as in the lab, each
	// keep theirs under their root).
	CNIIPAMDir = "/var/lib/cni/networks"
)

// Units and tasks.
const (
	UnitEtcd              = "kcore-etcd"
	UnitAPIServer         = "kcore-kube-apiserver"
	UnitControllerManager = "kcore-kube-controller-manager"
	UnitScheduler         = "kcore-kube-scheduler"
	UnitKubelet           = "kcore-kubelet"
	UnitContainerd        = "kcore-containerd"
	UnitKubeProxy         = "kcore-kube-proxy"
	UnitKeepalived        = "kcore-keepalived"
	UnitCilium            = "kcore-kubernetes-cilium"
	TaskFirewallVRRP      = "kcore-firewall-vrrp"
	TaskCiliumL2          = "kcore-kubernetes-cilium-l2"
	TaskProvisioner       = "kcore-kubernetes-provisioner"
	TaskAddons            = "kcore-kubernetes-addons"
	TaskKubeDNS           = "kcore-kube-dns-service"
	TaskBridgeRoutes      = "kcore-bridge-routes"
)

// Ports the components listen on besides the API server's.
const (
	EtcdClientPort        = 2379
	EtcdPeerPort          = 2380
	EtcdMetricsPort       = 2381
	ControllerManagerPort = 10257
	SchedulerPort         = 10259
	KubeletHealthzPort    = 10248
	KubeProxyHealthzPort  = 10256
)
