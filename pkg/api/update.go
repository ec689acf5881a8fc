package api

// ClusterUpdate moves nodes to a new OS and Kubernetes pin, one step at a time.
// In HCL it is `resource "kcore_cluster_update" "NAME" { … }` with snake_case
// attributes; in YAML its fields are camelCase.
type ClusterUpdate struct {
	// APIVersion is kcore.dev/v1; optional in manifests.
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	// Kind is ClusterUpdate.
	Kind string `json:"kind" yaml:"kind"`
	// Metadata names the update (HCL attribute name).
	Metadata ObjectMeta `json:"metadata" yaml:"metadata"`
	// Spec is the update.
	Spec UpdateSpec `json:"spec" yaml:"spec"`
	// Status is the rollout's progress. Ignored in manifests.
	Status UpdateStatus `json:"status,omitzero" yaml:"status,omitempty"`
}

// UpdateSpec is every attribute of the kcore_cluster_update resource.
type UpdateSpec struct {
	// Version is the release being rolled out, e.g. 0.5.0.
	Version string `json:"version" yaml:"version"`
	// FlakeRef is the flake the nodes build from, e.g. github:kcorehypervisor/kcore.
	FlakeRef string `json:"flakeRef,omitempty" yaml:"flakeRef,omitempty"`
	// FlakeRev is the flake's full git SHA (40 hex).
	FlakeRev string `json:"flakeRev,omitempty" yaml:"flakeRev,omitempty"`
	// NixpkgsRev is the nixpkgs full git SHA (40 hex).
	NixpkgsRev string `json:"nixpkgsRev,omitempty" yaml:"nixpkgsRev,omitempty"`
	// AllNodes targets every node; when false, Nodes selects them.
	AllNodes bool `json:"allNodes,omitempty" yaml:"allNodes,omitempty"`
	// Nodes lists the target node ids when allNodes is false.
	Nodes []string `json:"nodes,omitempty" yaml:"nodes,omitempty"`
	// Strategy is one-at-a-time (default) or batched.
	Strategy string `json:"strategy,omitempty" yaml:"strategy,omitempty"`
	// MaxUnavailable is how many nodes may be down at once. Default 1.
	MaxUnavailable int `json:"maxUnavailable,omitempty" yaml:"maxUnavailable,omitempty"`
	// BatchSize is how many nodes one step touches. Default 1.
	BatchSize int `json:"batchSize,omitempty" yaml:"batchSize,omitempty"`
	// DrainVMs drains virtual machines off a node before it is updated.
	DrainVMs bool `json:"drainVms,omitempty" yaml:"drainVms,omitempty"`
	// Activation is auto (default: switch in place) or reboot.
	Activation string `json:"activation,omitempty" yaml:"activation,omitempty"`
	// UpdateKind is kcore (default), os or kubernetes.
	UpdateKind string `json:"updateKind,omitempty" yaml:"updateKind,omitempty"`
	// SchemaVersion is the controller schema the release writes.
	SchemaVersion int `json:"schemaVersion,omitempty" yaml:"schemaVersion,omitempty"`
	// PreviousSchemaVersion is the schema the release upgrades from.
	PreviousSchemaVersion int `json:"previousSchemaVersion,omitempty" yaml:"previousSchemaVersion,omitempty"`
	// MinCompatibleReader is the oldest schema reader that can read what the release writes.
	MinCompatibleReader int `json:"minCompatibleReader,omitempty" yaml:"minCompatibleReader,omitempty"`
	// Approval is manual (default: wait for approve) or auto.
	Approval string `json:"approval,omitempty" yaml:"approval,omitempty"`
	// Approve starts a manual rollout.
	Approve bool `json:"approve,omitempty" yaml:"approve,omitempty"`
	// TestedOSPins are the versions this release was tested with.
	TestedOSPins OSPins `json:"testedOsPins,omitzero" yaml:"testedOsPins,omitempty"`
}

// OSPins are the pins a release was tested with.
type OSPins struct {
	// NixpkgsRev is the tested nixpkgs revision.
	NixpkgsRev string `json:"nixpkgsRev,omitempty" yaml:"nixpkgsRev,omitempty"`
	// CephRev is the tested Ceph revision.
	CephRev string `json:"cephRev,omitempty" yaml:"cephRev,omitempty"`
	// CephSHA256 is the tested Ceph source hash.
	CephSHA256 string `json:"cephSha256,omitempty" yaml:"cephSha256,omitempty"`
	// KubernetesVersion is the tested Kubernetes version, e.g. 1.37.0.
	KubernetesVersion string `json:"kubernetesVersion,omitempty" yaml:"kubernetesVersion,omitempty"`
}

// UpdateStatus is a rollout's progress.
type UpdateStatus struct {
	// Phase is pending, approved, rolling, paused, rolling-back, done or failed.
	Phase string `json:"phase,omitempty" yaml:"phase,omitempty"`
	// Steps are the rollout steps in order.
	Steps []UpdateStep `json:"steps,omitempty" yaml:"steps,omitempty"`
	// Message explains a pause or failure.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	// FromVersion is the Kubernetes release the nodes ran when the rollout
	// started; a rollback returns them to it.
	FromVersion string `json:"fromVersion,omitempty" yaml:"fromVersion,omitempty"`
	// ToVersion is the Kubernetes release the rollout moves the nodes to
	// (empty when the update does not move Kubernetes).
	ToVersion string `json:"toVersion,omitempty" yaml:"toVersion,omitempty"`
}

// UpdateStep is one step of a rollout.
type UpdateStep struct {
	// Nodes are the node ids the step updates.
	Nodes []string `json:"nodes" yaml:"nodes"`
	// State is pending, running, done, failed or rolled-back.
	State string `json:"state,omitempty" yaml:"state,omitempty"`
	// StartedAt is RFC 3339.
	StartedAt string `json:"startedAt,omitempty" yaml:"startedAt,omitempty"`
	// FinishedAt is RFC 3339.
	FinishedAt string `json:"finishedAt,omitempty" yaml:"finishedAt,omitempty"`
	// Message explains a failure.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	// Scope is what moves on the step's nodes: node, control-plane or kubelet.
	Scope string `json:"scope,omitempty" yaml:"scope,omitempty"`
	// SnapshotBefore names the clusters whose etcd is snapshotted before the step.
	SnapshotBefore []string `json:"snapshotBefore,omitempty" yaml:"snapshotBefore,omitempty"`
	// Snapshots are the etcd snapshots taken before the step.
	Snapshots []string `json:"snapshots,omitempty" yaml:"snapshots,omitempty"`
}
