package api

// Node is what a node agent registers: identity, network, storage, versions and
// labels. The plan engine checks manifests against these facts.
type Node struct {
	// APIVersion is kcore.dev/v1.
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	// Kind is Node.
	Kind string `json:"kind" yaml:"kind"`
	// Metadata.Name is the node id.
	Metadata ObjectMeta `json:"metadata" yaml:"metadata"`
	// Facts are what the agent measured.
	Facts NodeFacts `json:"facts" yaml:"facts"`
	// Status is the controller's view of the node.
	Status NodeHealth `json:"status,omitzero" yaml:"status,omitempty"`
}

// NodeFacts are the facts an agent reports about its machine.
type NodeFacts struct {
	// Hostname of the machine.
	Hostname string `json:"hostname,omitempty" yaml:"hostname,omitempty"`
	// Root is the agent's --root when it is not /: a node of a lab or a test,
	// several on one machine. Only the lab render profile reads it (the
	// local-path provisioner's directories, which kubelet resolves on the
	// machine itself, live under it).
	Root string `json:"root,omitempty" yaml:"root,omitempty"`
	// Addresses are every IP address on the machine, without prefix length.
	Addresses []string `json:"addresses,omitempty" yaml:"addresses,omitempty"`
	// Interfaces are the network interfaces.
	Interfaces []Interface `json:"interfaces,omitempty" yaml:"interfaces,omitempty"`
	// Storage are the storage backends (LVM volume groups, ZFS pools).
	Storage []StorageBackend `json:"storage,omitempty" yaml:"storage,omitempty"`
	// Disks are block devices by id.
	Disks []Disk `json:"disks,omitempty" yaml:"disks,omitempty"`
	// Versions maps a binary (kubelet, etcd, keepalived, helm, containerd)
	// to its version, and VersionCiliumChart to the version of the Cilium
	// chart the node holds.
	Versions map[string]string `json:"versions,omitempty" yaml:"versions,omitempty"`
	// Labels such as kcore.dev/failure-domain.
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	// ARPAnswered lists addresses (VIP, LB pool) seen answering ARP from another host.
	ARPAnswered []string `json:"arpAnswered,omitempty" yaml:"arpAnswered,omitempty"`
	// Fsync is the measured fsync latency of the etcd data directory.
	Fsync *FsyncLatency `json:"fsync,omitempty" yaml:"fsync,omitempty"`
	// ClockOffsetMillis is the measured offset from the controller's clock.
	ClockOffsetMillis int64 `json:"clockOffsetMillis,omitempty" yaml:"clockOffsetMillis,omitempty"`
	// CiliumRunning is true when a Cilium agent already runs on the host.
	CiliumRunning bool `json:"ciliumRunning,omitempty" yaml:"ciliumRunning,omitempty"`
}

// FailureDomainLabel is the node label naming its failure domain (rack, host, room).
const FailureDomainLabel = "kcore.dev/failure-domain"

// Interface is one network interface.
type Interface struct {
	// Name, e.g. enp6s0.
	Name string `json:"name" yaml:"name"`
	// MAC address.
	MAC string `json:"mac,omitempty" yaml:"mac,omitempty"`
	// Up is true when the link is up.
	Up bool `json:"up,omitempty" yaml:"up,omitempty"`
	// Addresses in CIDR form.
	Addresses []string `json:"addresses,omitempty" yaml:"addresses,omitempty"`
}

// StorageBackend is an LVM volume group or a ZFS pool.
type StorageBackend struct {
	// Class is lvm or zfs.
	Class string `json:"class" yaml:"class"`
	// Name of the volume group or pool.
	Name string `json:"name" yaml:"name"`
	// SizeBytes is the total size.
	SizeBytes int64 `json:"sizeBytes" yaml:"sizeBytes"`
	// FreeBytes is the unallocated size.
	FreeBytes int64 `json:"freeBytes" yaml:"freeBytes"`
}

// Disk is a block device.
type Disk struct {
	// ID is the /dev/disk/by-id name.
	ID string `json:"id" yaml:"id"`
	// Path is the kernel device path.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// SizeBytes is the device size.
	SizeBytes int64 `json:"sizeBytes,omitempty" yaml:"sizeBytes,omitempty"`
	// FSType is the filesystem signature blkid finds on the whole disk (ext4, xfs, LVM2_member, …); empty when none.
	FSType string `json:"fsType,omitempty" yaml:"fsType,omitempty"`
	// Label is that filesystem's label (kcore's volumes carry api.VolumeLabel).
	Label string `json:"label,omitempty" yaml:"label,omitempty"`
	// UUID is that filesystem's UUID.
	UUID string `json:"uuid,omitempty" yaml:"uuid,omitempty"`
	// PartitionTable is the partition table type blkid finds (gpt, dos); empty when none.
	PartitionTable string `json:"partitionTable,omitempty" yaml:"partitionTable,omitempty"`
	// Partitions are the disk's partitions (sysfs).
	Partitions []string `json:"partitions,omitempty" yaml:"partitions,omitempty"`
	// Holders are the devices built on the disk (device-mapper, md), from sysfs.
	Holders []string `json:"holders,omitempty" yaml:"holders,omitempty"`
	// MountPoints are where the disk is mounted, as host paths under the agent's root.
	MountPoints []string `json:"mountPoints,omitempty" yaml:"mountPoints,omitempty"`
	// Probed is true when the signature fields above were measured (blkid ran).
	Probed bool `json:"probed,omitempty" yaml:"probed,omitempty"`
}

// Empty reports whether the disk was probed and holds no filesystem,
// partition table, partition, holder or mount.
func (d Disk) Empty() bool {
	return d.Probed && d.FSType == "" && d.PartitionTable == "" && len(d.Partitions) == 0 && len(d.Holders) == 0 && len(d.MountPoints) == 0
}

// FsyncLatency is an fsync probe's result in milliseconds.
type FsyncLatency struct {
	// P50Millis is the median.
	P50Millis float64 `json:"p50Millis" yaml:"p50Millis"`
	// P99Millis is the 99th percentile.
	P99Millis float64 `json:"p99Millis" yaml:"p99Millis"`
}

// NodeHealth is the controller's view of a node.
type NodeHealth struct {
	// Ready is true while heartbeats arrive.
	Ready bool `json:"ready" yaml:"ready"`
	// LastHeartbeat is RFC 3339.
	LastHeartbeat string `json:"lastHeartbeat,omitempty" yaml:"lastHeartbeat,omitempty"`
}

// Keys of NodeFacts.Versions the plan reads besides the Kubernetes ones.
const (
	// VersionHelm is the helm the Cilium oneshot runs.
	VersionHelm = "helm"
	// VersionCiliumChart is the version of the Cilium chart the oneshot
	// installs (its Chart.yaml's version).
	VersionCiliumChart = "cilium-chart"
)
