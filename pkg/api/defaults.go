package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"path"
)

// Defaults from the reference.
const (
	DefaultCNI              = CNICilium
	DefaultClusterDNS       = "10.96.0.10"
	DefaultIface            = "enp6s0"
	DefaultStorageClassName = "local-path"
	DefaultFSType           = FSTypeExt4
	DefaultMountRoot        = "/mnt/kcore"
	DefaultCiliumMode       = "native-routing"
	DefaultCiliumMTU        = 1500
	DefaultCiliumTunnel     = "disabled"
	PrimaryAPIPort          = "6443"
)

// Allowed values.
const (
	CNICilium = "cilium"
	CNIBridge = "bridge"

	ProvisionerModeShared = "shared"
	ProvisionerModeLVM    = "lvm"

	StorageClassLVM  = "lvm"
	StorageClassZFS  = "zfs"
	StorageClassDisk = "disk"

	FSTypeExt4 = "ext4"
	FSTypeXFS  = "xfs"

	VolumeRoleFilesystem = "filesystem"
	VolumeRolePool       = "pool"
)

// Default fills every unset field of a cluster with the reference's defaults.
// It is idempotent. An API port other than 6443 stores the cluster with bridge
// CNI, as the reference says.
func (c *KubernetesCluster) Default() {
	c.APIVersion = APIVersion
	c.Kind = KindKubernetesCluster
	s := &c.Spec
	if s.CNI == "" {
		s.CNI = DefaultCNI
	}
	if _, bridge := forcesBridge(s.APIServerEndpoint); bridge {
		s.CNI = CNIBridge
	}
	if s.ClusterDNS == "" {
		s.ClusterDNS = DefaultClusterDNS
	}
	if s.CNI == CNICilium {
		s.Cilium.defaults()
	}
	for i := range s.ControlPlaneNodes {
		s.ControlPlaneNodes[i].defaults()
	}
	for i := range s.WorkerNodes {
		s.WorkerNodes[i].defaults()
	}
	if s.HighAvailability.Enabled && s.HighAvailability.HealthCheck == nil {
		s.HighAvailability.HealthCheck = ptr(true)
	}
	s.LocalProvisioner.defaults(c.Metadata.Name)
	s.EtcdBackup.defaults()
}

func (c *CiliumSpec) defaults() {
	if c.Mode == "" {
		c.Mode = DefaultCiliumMode
	}
	if c.MTU == 0 {
		c.MTU = DefaultCiliumMTU
	}
	if c.Tunnel == "" {
		c.Tunnel = DefaultCiliumTunnel
	}
	if c.AutoDirectNodeRoutes == nil {
		c.AutoDirectNodeRoutes = ptr(true)
	}
}

func (n *ClusterNode) defaults() {
	if n.Iface == "" {
		n.Iface = DefaultIface
	}
}

func (l *LocalProvisionerSpec) defaults(cluster string) {
	if !l.Enabled && len(l.Volumes) == 0 {
		return
	}
	if l.StorageClassName == "" {
		l.StorageClassName = DefaultStorageClassName
	}
	if l.Mode == "" {
		l.Mode = ProvisionerModeShared
	}
	for i := range l.Volumes {
		v := &l.Volumes[i]
		if v.FSType == "" {
			v.FSType = DefaultFSType
		}
		if v.Role == "" {
			v.Role = VolumeRoleFilesystem
			if l.Mode == ProvisionerModeLVM {
				v.Role = VolumeRolePool
			}
		}
		if v.MountPath == "" && l.Mode != ProvisionerModeLVM {
			v.MountPath = DefaultMountPath(cluster, v.Name)
		}
	}
}

// DefaultMountPath is /mnt/kcore/<cluster>/<name>.
func DefaultMountPath(cluster, volume string) string {
	return path.Join(DefaultMountRoot, cluster, volume)
}

// DiskByIDDir is the directory whose names a volume's disk is given by.
const DiskByIDDir = "/dev/disk/by-id"

// VolumeLabel is the filesystem label kcore gives a volume it formats:
// "kcore-" and six hex digits of its name's hash (fits both ext4's 16 and
// xfs's 12 characters). A disk carrying it holds kcore's filesystem.
func VolumeLabel(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "kcore-" + hex.EncodeToString(sum[:])[:6]
}

// VolumeName is the controller's name for a volume: k8s-<cluster>-<node>-<volume>.
func VolumeName(cluster, node, volume string) string {
	return "k8s-" + cluster + "-" + node + "-" + volume
}

// HealthCheckEnabled reports whether keepalived's API health script is on.
func (h HASpec) HealthCheckEnabled() bool {
	return h.HealthCheck == nil || *h.HealthCheck
}

// Update defaults.
const (
	StrategyOneAtATime = "one-at-a-time"
	StrategyBatched    = "batched"
	ActivationAuto     = "auto"
	ActivationReboot   = "reboot"
	ApprovalManual     = "manual"
	ApprovalAuto       = "auto"
	UpdateKindKcore    = "kcore"
	UpdateKindOS       = "os"
	UpdateKindK8s      = "kubernetes"
)

// Default fills unset ClusterUpdate fields: strategy one-at-a-time, batch size
// and max unavailable 1 (0 means unset), activation auto, approval manual,
// update kind kcore.
func (u *ClusterUpdate) Default() {
	u.APIVersion = APIVersion
	u.Kind = KindClusterUpdate
	s := &u.Spec
	if s.Strategy == "" {
		s.Strategy = StrategyOneAtATime
	}
	if s.BatchSize == 0 {
		s.BatchSize = 1
	}
	if s.MaxUnavailable == 0 {
		s.MaxUnavailable = 1
	}
	if s.Activation == "" {
		s.Activation = ActivationAuto
	}
	if s.Approval == "" {
		s.Approval = ApprovalManual
	}
	if s.UpdateKind == "" {
		s.UpdateKind = UpdateKindKcore
	}
}

func ptr[T any](v T) *T { return &v }

// forcesBridge reports whether an API endpoint's port makes the cluster use
// the bridge CNI (any port but PrimaryAPIPort), and returns the port.
func forcesBridge(endpoint string) (string, bool) {
	_, port, err := net.SplitHostPort(endpoint)
	return port, err == nil && port != PrimaryAPIPort
}
