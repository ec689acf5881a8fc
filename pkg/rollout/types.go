package rollout

import (
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// Input is everything a rollout plan is computed from.
type Input struct {
	// Update is the ClusterUpdate, defaulted (api.ClusterUpdate.Default).
	Update *api.ClusterUpdate
	// Clusters are the stored clusters with their status.
	Clusters []*api.KubernetesCluster
	// Nodes are the registered nodes with their facts and readiness.
	Nodes []*api.Node
	// Controllers are the controller replicas and the schema each reads and writes.
	Controllers []ControllerReplica
}

// ControllerReplica is one kcore-controller replica.
type ControllerReplica struct {
	// ID is the replica's raft server id.
	ID string `json:"id"`
	// Schema is the controller schema version the replica reads and writes.
	Schema int `json:"schema"`
}

// RolloutPlan is the ordered, checked rollout of one ClusterUpdate.
type RolloutPlan struct {
	// Name is the ClusterUpdate's name.
	Name string `json:"name"`
	// Version is the release being rolled out.
	Version string `json:"version"`
	// UpdateKind is kcore, os or kubernetes.
	UpdateKind string `json:"updateKind"`
	// Strategy is one-at-a-time or batched.
	Strategy string `json:"strategy"`
	// BatchSize is the number of workers per step (1 for one-at-a-time),
	// never more than MaxUnavailable.
	BatchSize int `json:"batchSize"`
	// MaxUnavailable is how many nodes may be down at once.
	MaxUnavailable int `json:"maxUnavailable"`
	// Activation is auto (switch in place) or reboot.
	Activation string `json:"activation"`
	// DrainVMs moves virtual machines off a node before it is updated.
	DrainVMs bool `json:"drainVms,omitempty"`
	// Order is workers-first, control-planes-first or
	// control-plane-components-first; OrderReason says why.
	Order string `json:"order"`
	// OrderReason explains Order in one sentence.
	OrderReason string `json:"orderReason"`
	// Kubernetes is the Kubernetes version change, nil when unknown.
	Kubernetes *VersionChange `json:"kubernetes,omitempty"`
	// Etcd is the etcd version change, nil when it does not change or is unknown.
	Etcd *VersionChange `json:"etcd,omitempty"`
	// Approval is manual or auto.
	Approval string `json:"approval"`
	// WaitsForApproval is true for a manual update not yet approved in the manifest.
	WaitsForApproval bool `json:"waitsForApproval,omitempty"`
	// Steps are the rollout steps in order.
	Steps []Step `json:"steps"`
	// Blocking are the issues that forbid starting the rollout.
	Blocking []plan.Issue `json:"blocking,omitempty"`
	// Warnings do not block.
	Warnings []plan.Issue `json:"warnings,omitempty"`
}

// Blocked reports whether the rollout must not start.
func (p *RolloutPlan) Blocked() bool { return len(p.Blocking) > 0 }

// VersionChange is a component's move from the versions the nodes run to the target.
type VersionChange struct {
	// From lists the distinct versions the target nodes run now, oldest first.
	From []string `json:"from"`
	// To is the target version.
	To string `json:"to"`
}

// Step is one rollout step: its nodes are taken down, updated and proven
// healthy together before the next step starts.
type Step struct {
	// Phase is workers, control-planes or kubelets.
	Phase string `json:"phase"`
	// Scope says what moves to the new pin on the step's nodes: node
	// (everything), control-plane (the OS pin, etcd, kube-apiserver,
	// controller-manager and scheduler; the kubelet keeps its version) or
	// kubelet (only the kubelet).
	Scope string `json:"scope"`
	// Nodes are the nodes the step updates, in order.
	Nodes []StepNode `json:"nodes"`
	// SnapshotBefore names the clusters whose etcd is snapshotted before the step.
	SnapshotBefore []string `json:"snapshotBefore,omitempty"`
	// Disruptions say what the step interrupts, per node.
	Disruptions []Disruption `json:"disruptions"`
}

// NodeIDs returns the ids of the step's nodes.
func (s Step) NodeIDs() []string {
	out := make([]string, len(s.Nodes))
	for i, n := range s.Nodes {
		out[i] = n.ID
	}
	return out
}

// StepNode is one node of a step.
type StepNode struct {
	// ID is the node id.
	ID string `json:"id"`
	// Role is control-plane, worker or standalone (registered, in no cluster).
	Role string `json:"role"`
	// Clusters are the clusters the node is a member of.
	Clusters []string `json:"clusters,omitempty"`
}

// Disruption is one thing a step interrupts on one node.
type Disruption struct {
	// Node is the node id.
	Node string `json:"node"`
	// Kind is drain, drain-vms, reboot, restart-unit, etcd-restart or vip-move.
	Kind string `json:"kind"`
	// Units are the units restarted (restart-unit only).
	Units []string `json:"units,omitempty"`
	// Detail says what happens, with the numbers.
	Detail string `json:"detail"`
}

// RoleStandalone is the role of a registered node that belongs to no cluster.
const RoleStandalone = "standalone"

// Step phases.
const (
	PhaseWorkers       = "workers"
	PhaseControlPlanes = "control-planes"
	PhaseKubelets      = "kubelets"
)

// Step scopes: what moves to the new pin.
const (
	ScopeNode         = "node"
	ScopeControlPlane = "control-plane"
	ScopeKubelet      = "kubelet"
)

// Rollout orders.
const (
	OrderWorkersFirst                = "workers-first"
	OrderControlPlanesFirst          = "control-planes-first"
	OrderControlPlaneComponentsFirst = "control-plane-components-first"
)

// Disruption kinds. Drain, restart-unit and vip-move are pkg/plan's.
const (
	DisruptionDrain       = plan.DisruptionDrain
	DisruptionDrainVMs    = "drain-vms"
	DisruptionReboot      = "reboot"
	DisruptionRestartUnit = plan.DisruptionRestartUnit
	DisruptionEtcdRestart = "etcd-restart"
	DisruptionVIPMove     = plan.DisruptionVIPMove
)

// Blocking issue codes. docs/updates.md explains each with its fix.
const (
	CodeNodeUnknown           = "update-node-unknown"
	CodeNodeNotReady          = "update-node-not-ready"
	CodeClusterNotReady       = "cluster-not-ready"
	CodeKubernetesVersionSkew = "kubernetes-version-skew"
	CodeEtcdUpgradePath       = "etcd-upgrade-path"
	CodeSchemaGate            = "schema-gate"
	CodeInvalidUpdate         = "invalid-update"
	CodeOSPinMissing          = "os-pin-missing"
)

// Warning codes.
const (
	CodeKubernetesPatchDowngrade = "kubernetes-patch-downgrade"
	CodeKubernetesVersionUnknown = "kubernetes-version-unknown"
	CodeNodeVersionsUnknown      = "node-versions-unknown"
	CodeEtcdVersionUnknown       = "etcd-version-unknown"
	CodeEtcdQuorumPause          = "etcd-quorum-pause"
	CodeBatchCapped              = "batch-capped"
	CodeNoTargets                = "no-targets"
	CodeActivationInPlace        = "activation-in-place"
)

// EtcdLeaderLabel is the node fact label an agent sets to "true" on the
// node that holds etcd leadership; that node is updated last among its
// cluster's control planes.
const EtcdLeaderLabel = "kcore.dev/etcd-leader"

// Version fact keys in api.NodeFacts.Versions.
const (
	VersionAPIServer = "kube-apiserver"
	VersionKubelet   = "kubelet"
	VersionEtcd      = "etcd"
)
