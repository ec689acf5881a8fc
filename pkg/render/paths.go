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

// FieldManager is the field manager of the objects the kubectl tasks apply
// (server-side apply).
const FieldManager = "kcore"

// serverSideReason ends the reason of a task whose argv is kubectlApply.
const serverSideReason = " (server-side apply, field manager " + FieldManager + ")"

// noSchemaCheck is the kubectl flag of every kubectl task. With kubectl's
// default (--validate=strict), kubectl first fetches and parses the API
// server's OpenAPI document of each group-version it applies, to learn
// whether the server checks fields, and the API server builds each one on
// its first request: on a new cluster's busy first control plane that was
// 2-3 s of each task's 3-4 s. The manifests these tasks apply are kcore's
// own templates, not the user's YAML; the lab test applies each of them
// with --validate=strict and --dry-run=server against the real API server,
// where an unknown or duplicate field fails it.
const noSchemaCheck = "--validate=false"

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
