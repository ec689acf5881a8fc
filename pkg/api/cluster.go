package api

import "kcore.dev/kcore/pkg/render/kubeflags"

// KubernetesCluster is one Kubernetes cluster on machines kcore manages. It is
// applied with `kctl kubernetes apply` and stored by the controller.
type KubernetesCluster struct {
	// APIVersion is kcore.dev/v1; optional in manifests.
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	// Kind is KubernetesCluster (kubernetes-cluster and kubernetes_cluster are accepted).
	Kind string `json:"kind" yaml:"kind"`
	// Metadata names the cluster.
	Metadata ObjectMeta `json:"metadata" yaml:"metadata"`
	// Spec is the desired cluster.
	Spec ClusterSpec `json:"spec" yaml:"spec"`
	// Status is what the controller observed. Ignored in manifests.
	Status ClusterStatus `json:"status,omitzero" yaml:"status,omitempty"`
}

// ClusterSpec is the desired state of a KubernetesCluster.
type ClusterSpec struct {
	// ClusterCIDR is the pod network, e.g. 10.244.0.0/16. Immutable.
	ClusterCIDR string `json:"clusterCidr" yaml:"clusterCidr"`
	// ServiceCIDR is the service network, e.g. 10.96.0.0/12. Immutable.
	ServiceCIDR string `json:"serviceCidr" yaml:"serviceCidr"`
	// ClusterDNS is the cluster DNS service address, inside serviceCidr. Default 10.96.0.10.
	ClusterDNS string `json:"clusterDns,omitempty" yaml:"clusterDns,omitempty"`
	// APIServerEndpoint is host:port of the API; with high availability the host is the VIP.
	// A port other than 6443 stores the cluster with bridge CNI.
	APIServerEndpoint string `json:"apiServerEndpoint" yaml:"apiServerEndpoint"`
	// CNI is cilium or bridge. Empty is stored as cilium; an API port other than 6443 forces bridge.
	CNI string `json:"cni,omitempty" yaml:"cni,omitempty"`
	// Cilium configures Cilium on the primary cluster.
	Cilium CiliumSpec `json:"cilium,omitzero" yaml:"cilium,omitempty"`
	// ControlPlaneNodes run etcd and the API server. The first entry bootstraps the cluster.
	ControlPlaneNodes []ClusterNode `json:"controlPlaneNodes" yaml:"controlPlaneNodes"`
	// WorkerNodes run only kubelet. May be empty when scheduleOnControlPlane is true.
	WorkerNodes []ClusterNode `json:"workerNodes,omitempty" yaml:"workerNodes,omitempty"`
	// HighAvailability puts the API behind a keepalived VIP.
	HighAvailability HASpec `json:"highAvailability,omitzero" yaml:"highAvailability,omitempty"`
	// ScheduleOnControlPlane lets control-plane nodes run pods (no NoSchedule taint).
	ScheduleOnControlPlane bool `json:"scheduleOnControlPlane,omitempty" yaml:"scheduleOnControlPlane,omitempty"`
	// LocalProvisioner creates local volumes and the local-path provisioner.
	LocalProvisioner LocalProvisionerSpec `json:"localProvisioner,omitzero" yaml:"localProvisioner,omitempty"`
	// APIServer adds command-line flags to kube-apiserver.
	APIServer ComponentSpec `json:"apiServer,omitzero" yaml:"apiServer,omitempty"`
	// ControllerManager adds command-line flags to kube-controller-manager.
	ControllerManager ComponentSpec `json:"controllerManager,omitzero" yaml:"controllerManager,omitempty"`
	// Scheduler adds command-line flags to kube-scheduler.
	Scheduler ComponentSpec `json:"scheduler,omitzero" yaml:"scheduler,omitempty"`
	// Kubelet adds command-line flags to every member's kubelet.
	Kubelet ComponentSpec `json:"kubelet,omitzero" yaml:"kubelet,omitempty"`
	// RegistryMirrors are pull-through mirrors containerd tries, in order, before the upstream
	// registry, rendered as /etc/containerd/certs.d/<registry>/hosts.toml. containerd
	// re-reads them on each pull: a change restarts nothing.
	RegistryMirrors []RegistryMirror `json:"registryMirrors,omitempty" yaml:"registryMirrors,omitempty"`
	// EtcdBackup schedules etcd backups, kept on the controller or on each
	// control plane; nil takes none.
	EtcdBackup *EtcdBackupSpec `json:"etcdBackup,omitempty" yaml:"etcdBackup,omitempty"`
	// CAGeneration counts the rotations of the cluster's certificate
	// authorities: raising it rotates the cluster, etcd and front-proxy CAs
	// with a dual-trust phase (kctl kubernetes rotate-ca). It never goes
	// down; a new cluster starts with CAs of this generation.
	CAGeneration int `json:"caGeneration,omitempty" yaml:"caGeneration,omitempty"`
	// InitialCluster is accepted for compatibility and ignored on create: membership comes from the node lists.
	InitialCluster string `json:"initialCluster,omitempty" yaml:"initialCluster,omitempty"`
}

// RegistryMirror is where containerd pulls one upstream registry's images from.
type RegistryMirror struct {
	// Registry is the upstream host[:port] as image references spell it, e.g.
	// registry.k8s.io, or docker.io for Docker Hub.
	Registry string `json:"registry" yaml:"registry"`
	// Endpoints are the mirrors' base URLs, tried in order, e.g. https://10.77.0.1:5000.
	// Plain http is allowed, with a warning.
	Endpoints []string `json:"endpoints" yaml:"endpoints"`
	// CAPEM is a PEM bundle of CA certificates the https endpoints are verified with,
	// in addition to the system roots. Optional.
	CAPEM string `json:"caPem,omitempty" yaml:"caPem,omitempty"`
}

// ComponentSpec configures one Kubernetes component kcore runs.
type ComponentSpec struct {
	// ExtraArgs are flags added to the component's command line, by flag name
	// without the leading dashes (kubeadm's convention): {"audit-log-maxage": "30"}
	// becomes --audit-log-maxage=30, after kcore's own flags, sorted by name.
	// A flag kcore sets itself is refused. A change restarts the component,
	// one control plane at a time.
	ExtraArgs map[string]string `json:"extraArgs,omitempty" yaml:"extraArgs,omitempty"`
}

// ExtraArgs are the extra flags of component (kubeflags.APIServer,
// ControllerManager, Scheduler or Kubelet), nil for any other.
func (s *ClusterSpec) ExtraArgs(component string) map[string]string {
	if c := s.component(component); c != nil {
		return c.ExtraArgs
	}
	return nil
}

func (s *ClusterSpec) component(name string) *ComponentSpec {
	switch name {
	case kubeflags.APIServer:
		return &s.APIServer
	case kubeflags.ControllerManager:
		return &s.ControllerManager
	case kubeflags.Scheduler:
		return &s.Scheduler
	case kubeflags.Kubelet:
		return &s.Kubelet
	}
	return nil
}

// CiliumSpec configures the Cilium CNI and its L2 load balancer.
type CiliumSpec struct {
	// Mode is the routing mode: native-routing (default) or tunnel.
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"`
	// MTU of the pod network. Default 1500.
	MTU int `json:"mtu,omitempty" yaml:"mtu,omitempty"`
	// Tunnel is the tunnel protocol: disabled (default), vxlan or geneve.
	Tunnel string `json:"tunnel,omitempty" yaml:"tunnel,omitempty"`
	// AutoDirectNodeRoutes installs routes to other nodes' pod CIDRs. Default true.
	AutoDirectNodeRoutes *bool `json:"autoDirectNodeRoutes,omitempty" yaml:"autoDirectNodeRoutes,omitempty"`
	// LoadBalancerIPPools are CIDRs announced over L2 for LoadBalancer services.
	LoadBalancerIPPools []string `json:"loadBalancerIpPools,omitempty" yaml:"loadBalancerIpPools,omitempty"`
}

// ClusterNode is one member of the cluster.
type ClusterNode struct {
	// NodeID is the id the node's agent registered with.
	NodeID string `json:"nodeId" yaml:"nodeId"`
	// AdvertiseAddress is the node's IPv4 address used by etcd, the API server and kubelet.
	AdvertiseAddress string `json:"advertiseAddress" yaml:"advertiseAddress"`
	// Iface is the node's interface for Cilium devices and L2 announcements. Default enp6s0.
	Iface string `json:"iface,omitempty" yaml:"iface,omitempty"`
}

// HASpec configures the keepalived VIP in front of the API servers.
type HASpec struct {
	// Enabled starts keepalived on each control plane.
	Enabled bool `json:"enabled,omitempty" yaml:"enabled,omitempty"`
	// VIPAddress is the virtual IPv4 address (assigned as /24). Required when enabled.
	VIPAddress string `json:"vipAddress,omitempty" yaml:"vipAddress,omitempty"`
	// VIPInterface is the interface that carries the VIP. Required when enabled.
	VIPInterface string `json:"vipInterface,omitempty" yaml:"vipInterface,omitempty"`
	// HealthCheck makes keepalived give up the VIP when the local API server's /readyz fails. Default true.
	HealthCheck *bool `json:"healthCheck,omitempty" yaml:"healthCheck,omitempty"`
}

// LocalProvisionerSpec configures local volumes and the local-path provisioner.
type LocalProvisionerSpec struct {
	// Enabled is required when volumes are listed.
	Enabled bool `json:"enabled,omitempty" yaml:"enabled,omitempty"`
	// StorageClassName of the provisioner's StorageClass. Default local-path.
	StorageClassName string `json:"storageClassName,omitempty" yaml:"storageClassName,omitempty"`
	// Mode is shared (default: one filesystem per volume served by local-path) or lvm (one thin pool, no provisioner).
	Mode string `json:"mode,omitempty" yaml:"mode,omitempty"`
	// Volumes are the local volumes to create.
	Volumes []VolumeSpec `json:"volumes,omitempty" yaml:"volumes,omitempty"`
}

// VolumeSpec is one local volume on one node.
type VolumeSpec struct {
	// Name of the volume, unique per node.
	Name string `json:"name" yaml:"name"`
	// NodeID of the node that holds the volume.
	NodeID string `json:"nodeId" yaml:"nodeId"`
	// StorageClass is the node's storage backend: lvm, zfs or disk (a whole raw disk named by disk).
	StorageClass string `json:"storageClass" yaml:"storageClass"`
	// SizeBytes is the volume size. Can grow, never shrink. Required for lvm and zfs; empty for disk, whose volume is the whole disk.
	SizeBytes int64 `json:"sizeBytes,omitempty" yaml:"sizeBytes,omitempty"`
	// Disk is the whole disk of storageClass disk, as /dev/disk/by-id/NAME. kcore formats it only while the node reports it empty (no filesystem or partition table) and adopts it only when it holds kcore's own filesystem for this volume.
	Disk string `json:"disk,omitempty" yaml:"disk,omitempty"`
	// FSType is ext4 (default) or xfs.
	FSType string `json:"fsType,omitempty" yaml:"fsType,omitempty"`
	// Role is filesystem (default) or pool (mode lvm).
	Role string `json:"role,omitempty" yaml:"role,omitempty"`
	// VolumeGroup is the LVM volume group or ZFS pool. Required in mode lvm.
	VolumeGroup string `json:"volumeGroup,omitempty" yaml:"volumeGroup,omitempty"`
	// MountPath defaults to /mnt/kcore/<cluster>/<name>. Empty in mode lvm.
	MountPath string `json:"mountPath,omitempty" yaml:"mountPath,omitempty"`
}

// ClusterStatus is what the controller observed about a cluster.
type ClusterStatus struct {
	// Phase is one of bootstrapping, ready, degraded, updating, scaling, deleting.
	Phase string `json:"phase,omitempty" yaml:"phase,omitempty"`
	// ObservedGeneration is the spec generation the phase refers to.
	ObservedGeneration int64 `json:"observedGeneration,omitempty" yaml:"observedGeneration,omitempty"`
	// Conditions are the latest health checks.
	Conditions []Condition `json:"conditions,omitempty" yaml:"conditions,omitempty"`
	// Nodes is the per-node state.
	Nodes []NodeStatus `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	// LastHealthCheck is when health was last checked, RFC 3339.
	LastHealthCheck string `json:"lastHealthCheck,omitempty" yaml:"lastHealthCheck,omitempty"`
	// HealthInterval is how often the leader that wrote LastHealthCheck
	// checks health (its --health-interval, a Go duration), so a reader
	// can tell a current status from a stale one (StaleFor).
	HealthInterval string `json:"healthInterval,omitempty" yaml:"healthInterval,omitempty"`
	// KubernetesVersion is the Kubernetes release the cluster runs, e.g.
	// v1.37.2: recorded from the controller's --kubernetes-version when the
	// cluster is created, moved only by a ClusterUpdate.
	KubernetesVersion string `json:"kubernetesVersion,omitempty" yaml:"kubernetesVersion,omitempty"`
	// Pins are the nodes whose components run another release than
	// KubernetesVersion while a ClusterUpdate rolls, by node id.
	Pins map[string]NodePin `json:"pins,omitempty" yaml:"pins,omitempty"`
	// EtcdGeneration counts the etcd disaster recoveries the cluster went
	// through: etcd keeps its data in /var/lib/etcd at 0 and in
	// /var/lib/etcd-restore/<generation>/data after a restore.
	EtcdGeneration int `json:"etcdGeneration,omitempty" yaml:"etcdGeneration,omitempty"`
	// EtcdRestore is the etcd restore in progress, nil when none is.
	EtcdRestore *EtcdRestore `json:"etcdRestore,omitempty" yaml:"etcdRestore,omitempty"`
	// SpecRollout is the spec change rolling out one control plane at a
	// time (or the last one, done), nil when none did.
	SpecRollout *SpecRollout `json:"specRollout,omitempty" yaml:"specRollout,omitempty"`
	// Slot is the cluster's place among the clusters sharing its machines,
	// recorded when it is created and never moved: 0 (primary) keeps the
	// reference's names, paths and ports; a cluster created on a machine
	// another cluster already uses takes the lowest slot free on all its
	// machines and derives its own (render.LayoutFor).
	Slot int `json:"slot,omitempty" yaml:"slot,omitempty"`
	// Shared are the members, recorded at create, whose machine already ran
	// another cluster: a cluster in a slot above 0 runs its control plane
	// there without a kubelet (a machine is a node of one cluster only).
	Shared []string `json:"shared,omitempty" yaml:"shared,omitempty"`
	// APIEndpoint is the API endpoint (host:port) the cluster last answered
	// /readyz through. A spec whose apiServerEndpoint differs from it moves
	// the endpoint, which reaches every member at once instead of rolling.
	APIEndpoint string `json:"apiEndpoint,omitempty" yaml:"apiEndpoint,omitempty"`
	// Certificates are the cluster's stored certificates as the leader
	// last read them (no keys): CAs first, then every leaf.
	Certificates []CertificateStatus `json:"certificates,omitempty" yaml:"certificates,omitempty"`
	// CAGeneration is the generation of the CAs that issue the cluster's
	// certificates.
	CAGeneration int `json:"caGeneration,omitempty" yaml:"caGeneration,omitempty"`
	// CARotation is the rotation of the cluster's CAs in progress, nil
	// when none is.
	CARotation *CARotation `json:"caRotation,omitempty" yaml:"caRotation,omitempty"`
	// EtcdStaleMembers are what the last health check found in etcd's
	// membership that the manifest does not account for.
	EtcdStaleMembers []StaleEtcdMember `json:"etcdStaleMembers,omitempty" yaml:"etcdStaleMembers,omitempty"`
}

// Reasons of a StaleEtcdMember.
const (
	// StaleNotInManifest is an etcd member no control plane of the
	// manifest has the peer URL of (a machine that left etcd's view of the
	// cluster without leaving etcd).
	StaleNotInManifest = "not-in-manifest"
	// StaleNeverJoined is a control plane of the manifest that has no etcd
	// member (a machine that never joined).
	StaleNeverJoined = "never-joined"
)

// StaleEtcdMember is an etcd member, or a control plane, that etcd's
// membership and the manifest disagree on.
type StaleEtcdMember struct {
	// Reason is StaleNotInManifest or StaleNeverJoined.
	Reason string `json:"reason" yaml:"reason"`
	// Name is the member's name (its node id once it started) or, for a
	// control plane that never joined, its node id.
	Name string `json:"name,omitempty" yaml:"name,omitempty"`
	// ID is etcd's member id (not-in-manifest only).
	ID uint64 `json:"id,omitempty" yaml:"id,omitempty"`
	// PeerURLs are the member's peer URLs.
	PeerURLs []string `json:"peerURLs,omitempty" yaml:"peerURLs,omitempty"`
}

// SpecRollout is a spec change whose new NodeStates restart control-plane
// units (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// keepalived) or kubelets: the orchestrator publishes them step by step,
// one control plane at a time and kubelets in batches, with the gates of a
// ClusterUpdate between steps. Nodes of a step not released yet keep the
// state they run.
type SpecRollout struct {
	// Generation is the spec generation rolling out.
	Generation int64 `json:"generation" yaml:"generation"`
	// Phase is rolling, paused (a step failed) or done (kept until the next
	// spec change).
	Phase string `json:"phase" yaml:"phase"`
	// Message explains a pause.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	// Steps are the rollout's steps in order: scope control-plane (one node)
	// or kubelet (a batch).
	Steps []UpdateStep `json:"steps" yaml:"steps"`
	// CA is the CA state (CAState.Key) the rollout was planned for: a
	// phase of a CA rotation rolls out like a spec generation.
	CA string `json:"ca,omitempty" yaml:"ca,omitempty"`
	// Released are the nodes whose new state may be published, with the
	// generation of the state they ran before it.
	Released map[string]int64 `json:"released,omitempty" yaml:"released,omitempty"`
}

// SpecRolloutDone is the phase of a spec rollout whose every step is done;
// it stays in the status until the next spec change.
const SpecRolloutDone = "done"

// Held reports whether node id waits for its step before its new state is
// published.
func (r *SpecRollout) Held(id string) bool {
	if r == nil || r.Phase == SpecRolloutDone {
		return false
	}
	if _, ok := r.Released[id]; ok {
		return false
	}
	for _, s := range r.Steps {
		for _, n := range s.Nodes {
			if n == id {
				return true
			}
		}
	}
	return false
}

// EtcdRestore is a requested etcd disaster recovery: every control plane
// restores the same stored snapshot into the data directory of Generation
// and etcd starts again from it as a new cluster of the same members.
type EtcdRestore struct {
	// Snapshot is the stored EtcdSnapshot's name, <cluster>/<taken>-<reason>.
	Snapshot string `json:"snapshot" yaml:"snapshot"`
	// Generation is the EtcdGeneration the restore creates.
	Generation int `json:"generation" yaml:"generation"`
	// Phase is restoring until every control plane runs etcd on the new
	// data and the cluster is healthy; the restore is then removed.
	Phase string `json:"phase" yaml:"phase"`
	// RequestedBy is the subject that asked for the restore.
	RequestedBy string `json:"requestedBy,omitempty" yaml:"requestedBy,omitempty"`
	// StartedAt is when the restore was requested, RFC 3339.
	StartedAt string `json:"startedAt,omitempty" yaml:"startedAt,omitempty"`
}

// EtcdRestorePhaseRestoring is the phase of an EtcdRestore in progress.
const EtcdRestorePhaseRestoring = "restoring"

// NodePin is the Kubernetes release one node's components run during a
// rollout; an empty field means the cluster's KubernetesVersion.
type NodePin struct {
	// ControlPlane is the release of kube-apiserver, kube-controller-manager
	// and kube-scheduler.
	ControlPlane string `json:"controlPlane,omitempty" yaml:"controlPlane,omitempty"`
	// Kubelet is the release of the kubelet (and kube-proxy).
	Kubelet string `json:"kubelet,omitempty" yaml:"kubelet,omitempty"`
	// VIPReleased stops keepalived on the node while its control plane
	// moves, so the API VIP goes to another control plane before
	// kube-apiserver restarts here.
	VIPReleased bool `json:"vipReleased,omitempty" yaml:"vipReleased,omitempty"`
}

// NodeStatus is one cluster member's observed state.
type NodeStatus struct {
	// NodeID of the member.
	NodeID string `json:"nodeId" yaml:"nodeId"`
	// Role is control-plane or worker.
	Role string `json:"role" yaml:"role"`
	// Ready is true when every unit rendered for the node is healthy.
	Ready bool `json:"ready" yaml:"ready"`
	// ObservedGeneration is the NodeState generation the agent last applied.
	ObservedGeneration int64 `json:"observedGeneration,omitempty" yaml:"observedGeneration,omitempty"`
	// Message explains a not-ready node.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
}

// Cluster phases.
const (
	PhaseBootstrapping = "bootstrapping"
	PhaseReady         = "ready"
	PhaseDegraded      = "degraded"
	PhaseUpdating      = "updating"
	PhaseScaling       = "scaling"
	PhaseDeleting      = "deleting"
)

// Node roles within a cluster.
const (
	RoleControlPlane = "control-plane"
	RoleWorker       = "worker"
)

// Members returns the control-plane nodes followed by the workers.
func (s *ClusterSpec) Members() []ClusterNode {
	out := make([]ClusterNode, 0, len(s.ControlPlaneNodes)+len(s.WorkerNodes))
	out = append(out, s.ControlPlaneNodes...)
	return append(out, s.WorkerNodes...)
}

// IsControlPlane reports whether node id is one of the control-plane nodes.
func (s *ClusterSpec) IsControlPlane(id string) bool {
	for _, n := range s.ControlPlaneNodes {
		if n.NodeID == id {
			return true
		}
	}
	return false
}

// Release is the Kubernetes release node id's control-plane components
// (controlPlane) or kubelet run: its rollout pin, else KubernetesVersion
// (empty when neither is recorded).
func (s *ClusterStatus) Release(id string, controlPlane bool) string {
	pin := s.Pins[id]
	v := pin.Kubelet
	if controlPlane {
		v = pin.ControlPlane
	}
	if v == "" {
		v = s.KubernetesVersion
	}
	return v
}

// CertificateStatus is one stored certificate of a cluster.
type CertificateStatus struct {
	// Name is where the controller keeps it, e.g. controlPlanes/node-105/apiServer.
	Name string `json:"name" yaml:"name"`
	// Subject is the certificate's distinguished name, e.g. CN=kube-apiserver.
	Subject string `json:"subject" yaml:"subject"`
	// Issuer is the distinguished name of the CA that signed it.
	Issuer string `json:"issuer" yaml:"issuer"`
	// NotAfter is when it expires, RFC 3339.
	NotAfter string `json:"notAfter" yaml:"notAfter"`
}
