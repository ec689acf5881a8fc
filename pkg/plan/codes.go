package plan

// Cluster actions.
const (
	ActionCreate  = "create"
	ActionUpdate  = "update"
	ActionReplace = "replace"
	ActionDelete  = "delete"
	ActionNoOp    = "no-op"
)

// Components a step acts on. A volume's component is ComponentVolumePrefix + its name.
const (
	ComponentEtcd              = "etcd"
	ComponentEtcdBackup        = "etcd-backup"
	ComponentAPIServer         = "kube-apiserver"
	ComponentControllerManager = "kube-controller-manager"
	ComponentScheduler         = "kube-scheduler"
	ComponentKubelet           = "kubelet"
	ComponentContainerd        = "containerd"
	ComponentKeepalived        = "keepalived"
	ComponentCilium            = "cilium"
	ComponentProvisioner       = "provisioner"
	ComponentVolumePrefix      = "volume:"
	ComponentCertificates      = "certificates"
	ComponentFirewall          = "firewall"
	ComponentMembership        = "membership"
	ComponentKubeProxy         = "kube-proxy"
	ComponentBridgeCNI         = "bridge-cni"
	ComponentAddons            = "addons"
	ComponentFiles             = "files"
)

// Disruption classes, from least to most disruptive.
const (
	DisruptionNone           = "none"
	DisruptionRestartUnit    = "restart-unit"
	DisruptionCertReissue    = "cert-reissue"
	DisruptionVolumeGrow     = "volume-grow"
	DisruptionVIPMove        = "vip-move"
	DisruptionDrain          = "drain"
	DisruptionEtcdMembership = "etcd-membership"
)

// Step actions.
const (
	StepCreate        = "create"
	StepStart         = "start"
	StepRestart       = "restart"
	StepReload        = "reload"
	StepStop          = "stop"
	StepRemove        = "remove"
	StepKeep          = "keep"
	StepIssue         = "issue"
	StepReissue       = "reissue"
	StepApply         = "apply"
	StepGrow          = "grow"
	StepRemount       = "remount"
	StepDrain         = "drain"
	StepAddMember     = "add-member"
	StepRemoveMember  = "remove-member"
	StepPromoteMember = "promote-member"
	StepReplace       = "replace"
)

// Blocking issue codes. docs/plan.md explains each with its fix.
const (
	CodeInvalidManifest           = "invalid-manifest"
	CodeControlPlaneNotRegistered = "control-plane-not-registered"
	CodeControlPlaneNotReady      = "control-plane-not-ready"
	CodeVolumeShrink              = "volume-shrink"
	CodeVolumeImmutable           = "volume-immutable"
	CodeStorageClassMismatch      = "storage-class-mismatch"
	CodeVolumeGroupMissing        = "volume-group-missing"
	CodeStorageInsufficient       = "storage-insufficient"
	CodeDiskMissing               = "disk-missing"
	CodeDiskInUse                 = "disk-in-use"
	CodeDiskForeignData           = "disk-foreign-data"
	CodeImmutableField            = "immutable-field"
	CodeCiliumAlreadyRunning      = "cilium-already-running"
	CodeAddressInUse              = "address-in-use"
	CodeInterfaceMissing          = "interface-missing"
	CodeAddressNotOnNode          = "address-not-on-node"
	CodeMembershipChange          = "membership-change"
	CodeQuorumLoss                = "quorum-loss"
	CodeClusterBusy               = "cluster-busy"
	CodeClusterNotFound           = "cluster-not-found"
	CodeNotAMember                = "not-a-member"
	CodeConflictingRequest        = "conflicting-request"
	CodeRenderFailed              = "render-failed"
	// Deleting ClusterUpdates (planapply).
	CodeUpdateNotFound   = "update-not-found"
	CodeUpdateInProgress = "update-in-progress"
	// Clusters sharing a machine (sharing.go).
	CodeNoSlot                = "no-slot"
	CodeSlotInUse             = "slot-in-use"
	CodePortInUse             = "port-in-use"
	CodeRouterIDInUse         = "router-id-in-use"
	CodeCIDROverlap           = "cidr-overlap"
	CodePathInUse             = "path-in-use"
	CodeWorkerOnSharedMachine = "worker-on-shared-machine"
	CodeNoPodNode             = "no-pod-node"
	CodeContainerdUnsupported = "containerd-unsupported"
	// CA rotation (carotation.go).
	CodeCAGenerationLowered = "ca-generation-lowered"
)

// Warning codes.
const (
	CodeWorkerNotRegistered    = "worker-not-registered"
	CodeWorkerNotReady         = "worker-not-ready"
	CodeEvenControlPlanes      = "even-control-planes"
	CodeFailureDomainShared    = "failure-domain-shared"
	CodeSlowFsync              = "slow-fsync"
	CodeInitialClusterIgnored  = "initial-cluster-ignored"
	CodeManifestWarning        = "manifest-warning"
	CodeControlPlaneOnly       = "control-plane-only"
	CodeEtcdStaleMember        = "etcd-stale-member"
	CodeCARotation             = "ca-rotation"
	CodeCiliumInstallerMissing = "cilium-installer-missing"
)

// SlowFsyncMillis is etcd's guidance for the 99th percentile of WAL fsync latency.
const SlowFsyncMillis = 10
