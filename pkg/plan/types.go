package plan

import (
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// FormatVersion is the version of the JSON plan format this package writes and reads.
const FormatVersion = 1

// Input is everything a plan is computed from.
type Input struct {
	// Desired are the clusters from the manifests. They are defaulted and
	// validated again here; validation errors become invalid-manifest issues.
	Desired []*api.KubernetesCluster
	// Stored are the controller's current clusters, with Status.Phase.
	Stored []*api.KubernetesCluster
	// Nodes are the registered nodes with their facts and Status.Ready.
	Nodes []*api.Node
	// Index is the controller raft index the plan is computed at.
	Index uint64
	// Prune deletes stored clusters that are absent from Desired.
	Prune bool
	// Scale is set for `kctl kubernetes scale`.
	Scale *ScaleRequest
	// Delete names clusters to delete (`kctl kubernetes delete NAME`).
	Delete []string
	// Force is a delete's --force: it may be added to a delete already in
	// progress (the cluster's phase is deleting), where it is the one change
	// allowed.
	Force bool
	// Recreate names stored clusters that Desired replaces: they are torn down
	// and created again, which allows immutable-field changes and loses their
	// etcd data.
	Recreate []string
	// Render are the orchestrator's render options: both renders a plan
	// compares use them, so what the plan shows is what apply renders.
	Render render.Options
}

// ScaleRequest is a membership change of one stored cluster.
type ScaleRequest struct {
	// Cluster is the stored cluster's name.
	Cluster string `json:"cluster"`
	// AddControlPlanes join as etcd members and API servers, one at a time.
	AddControlPlanes []api.ClusterNode `json:"addControlPlanes,omitempty"`
	// AddWorkers join as kubelets.
	AddWorkers []api.ClusterNode `json:"addWorkers,omitempty"`
	// Remove are node ids to drain and remove; their volumes are kept on disk.
	Remove []string `json:"remove,omitempty"`
	// Replace swaps control planes for new machines in place: each old
	// member leaves etcd first, then its replacement joins as a learner and
	// is promoted (`kctl kubernetes replace`).
	Replace []Replacement `json:"replace,omitempty"`
}

// Replacement is one control plane swapped for another machine.
type Replacement struct {
	// Node is the control plane that leaves, usually a dead one.
	Node string `json:"node"`
	// With is the machine that takes its place.
	With api.ClusterNode `json:"with"`
}

// Plan is the result of Compute. Its JSON encoding is the versioned plan format.
type Plan struct {
	// Version is the JSON format version, FormatVersion.
	Version int `json:"version"`
	// Index is the controller raft index the plan was computed at.
	Index uint64 `json:"index"`
	// Hash is the hex SHA-256 of the canonical encoding of Version, Index and Clusters.
	Hash string `json:"hash"`
	// Clusters holds one entry per cluster the request touches, sorted by name.
	Clusters []ClusterPlan `json:"clusters"`
	// Blocking are the issues that forbid applying the plan.
	Blocking []Issue `json:"blocking,omitempty"`
	// Warnings are issues that do not block.
	Warnings []Issue `json:"warnings,omitempty"`
}

// ClusterPlan is what happens to one cluster.
type ClusterPlan struct {
	// Name of the cluster.
	Name string `json:"name"`
	// Action is create, update, replace, delete or no-op.
	Action string `json:"action"`
	// Diff lists the field changes that cause the action (empty for create and delete).
	Diff []FieldChange `json:"diff,omitempty"`
	// Steps are the ordered operations per node and component.
	Steps []Step `json:"steps,omitempty"`
	// Desired is the object the controller stores when the plan is applied
	// (name, labels and defaulted spec); nil for delete and no-op.
	Desired *api.KubernetesCluster `json:"desired,omitempty"`
	// Slot and Shared are where the cluster goes among the clusters sharing
	// its machines (render.Place): apply records them in its status.
	Slot   int      `json:"slot,omitempty"`
	Shared []string `json:"shared,omitempty"`
	// StoredGeneration and StoredPhase are the stored cluster's spec
	// generation and phase the plan was computed against (unset for a
	// create). Being in the plan's hash, with the steps and the field
	// changes, they make a plan stale once another apply wrote the cluster
	// or its phase moved, and not when the controller only recorded an
	// observation in its status (a health check's time, a condition).
	StoredGeneration int64  `json:"storedGeneration,omitempty"`
	StoredPhase      string `json:"storedPhase,omitempty"`
}

// FieldChange is one changed field: Old is empty for an added field, New for a removed one.
type FieldChange struct {
	// Path is the field path, e.g. spec.localProvisioner.volumes[1].sizeBytes.
	Path string `json:"path"`
	// Old is the stored value.
	Old string `json:"old,omitempty"`
	// New is the desired value.
	New string `json:"new,omitempty"`
}

// Step is one operation on one node.
type Step struct {
	// Node is the node id the step runs on.
	Node string `json:"node"`
	// Component is etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kubelet, kube-proxy, keepalived, bridge-cni, cilium,
	// addons, provisioner, volume:<name>, certificates, firewall, files or
	// membership.
	Component string `json:"component"`
	// Action is what is done to the component, e.g. start, restart, grow,
	// derived from its changed items.
	Action string `json:"action"`
	// Disruption is none, restart-unit, etcd-membership, vip-move,
	// volume-grow, cert-reissue or drain.
	Disruption string `json:"disruption"`
	// Detail says what happens beyond the items: etcd membership, a drain,
	// a Kubernetes object that is replaced.
	Detail string `json:"detail,omitempty"`
	// QuorumAfter is the projected etcd state after the step, e.g. "3/3 healthy, quorum 2".
	QuorumAfter string `json:"quorumAfter,omitempty"`
	// Changes are the rendered items of the component that differ between
	// the two renders (NodeDiff); empty only for membership steps (drain,
	// deleting the Node object).
	Changes []ItemChange `json:"changes,omitempty"`
}

// Issue is a blocking issue or a warning.
type Issue struct {
	// Code is stable and kebab-case, e.g. volume-shrink.
	Code string `json:"code"`
	// Cluster is the cluster the issue is about.
	Cluster string `json:"cluster,omitempty"`
	// Path is the field path, e.g. spec.localProvisioner.volumes[1].sizeBytes.
	Path string `json:"path,omitempty"`
	// Node is the node id the issue is about.
	Node string `json:"node,omitempty"`
	// Message says what is wrong, with the numbers.
	Message string `json:"message"`
	// Fix says what to do.
	Fix string `json:"fix,omitempty"`
}

// Changes reports whether applying the plan would change anything.
func (p *Plan) Changes() bool {
	for _, c := range p.Clusters {
		if c.Action != ActionNoOp {
			return true
		}
	}
	return false
}

// Blocked reports whether the plan has blocking issues and must not be applied.
func (p *Plan) Blocked() bool { return len(p.Blocking) > 0 }

// Counts returns how many clusters each action touches, keyed by action.
func (p *Plan) Counts() map[string]int {
	out := map[string]int{}
	for _, c := range p.Clusters {
		out[c.Action]++
	}
	return out
}
