package api

// Kind names accepted in manifests. KindKubernetesCluster also has aliases,
// see CanonicalKind.
const (
	KindKubernetesCluster = "KubernetesCluster"
	KindClusterUpdate     = "ClusterUpdate"
	KindNode              = "Node"
	KindGitSource         = "GitSource"
	// KindGitSourceStatus holds a GitSource's status, written by the leader only.
	KindGitSourceStatus = "GitSourceStatus"
)

// Annotations the controller records on objects a GitSource writes.
const (
	// AnnotationGitSource names the GitSource that created the object and
	// may prune it.
	AnnotationGitSource = "kcore.dev/git-source"
	// AnnotationGitCommit is the commit the GitSource last wrote the object from.
	AnnotationGitCommit = "kcore.dev/git-commit"
)

// APIVersion is the version stamped on every object kcore stores.
const APIVersion = "kcore.dev/v1"

// CanonicalKind maps a kind as written in a manifest to its canonical name.
// It returns "" for a kind kcore does not know.
func CanonicalKind(kind string) string {
	switch kind {
	case KindKubernetesCluster, "kubernetes-cluster", "kubernetes_cluster":
		return KindKubernetesCluster
	case KindClusterUpdate, "cluster-update", "cluster_update":
		return KindClusterUpdate
	case KindNode:
		return KindNode
	}
	return ""
}

// ObjectMeta is the metadata every stored object carries. Name comes from the
// manifest; the indexes and times are set by the controller.
type ObjectMeta struct {
	// Name identifies the object within its kind. It must be a DNS label.
	Name string `json:"name" yaml:"name"`
	// Labels are free-form key/value pairs.
	Labels map[string]string `json:"labels,omitempty" yaml:"labels,omitempty"`
	// Annotations record who wrote the object: the GitSource that owns it
	// and the commit it last wrote (AnnotationGitSource, AnnotationGitCommit).
	// Set by the controller; manifests cannot write them.
	Annotations map[string]string `json:"annotations,omitempty" yaml:"-"`
	// Generation increases each time the spec changes. Set by the controller.
	Generation int64 `json:"generation,omitempty" yaml:"generation,omitempty"`
	// CreateIndex is the controller's raft index at creation. Set by the controller.
	CreateIndex uint64 `json:"createIndex,omitempty" yaml:"createIndex,omitempty"`
	// ModifyIndex is the controller's raft index at the last change. Set by the controller.
	ModifyIndex uint64 `json:"modifyIndex,omitempty" yaml:"modifyIndex,omitempty"`
	// CreatedAt is the time of creation in RFC 3339, stamped by the leader. Set by the controller.
	CreatedAt string `json:"createdAt,omitempty" yaml:"createdAt,omitempty"`
}

// Condition types a delete records on a cluster (written by the apply commit,
// read by the orchestrator's teardown).
const (
	// ConditionForceDelete: tear down even where nodes do not answer.
	ConditionForceDelete = "ForceDelete"
	// ConditionPurgeVolumes: also remove the volumes kcore created, with their data.
	ConditionPurgeVolumes = "PurgeVolumes"
)

// ConditionBootstrapped is the cluster condition the orchestrator turns
// True the first time the cluster is ready (every member applied its state,
// the add-ons' oneshots included) and never turns back.
const ConditionBootstrapped = "Bootstrapped"

// Bootstrapped reports whether the cluster was ready once
// (ConditionBootstrapped is True): what a create installs is installed.
func (s ClusterStatus) Bootstrapped() bool {
	for _, c := range s.Conditions {
		if c.Type == ConditionBootstrapped {
			return c.Status == "True"
		}
	}
	return false
}

// Condition is one observation about an object, as in Kubernetes.
type Condition struct {
	// Type names the check, e.g. EtcdQuorum or APIReady.
	Type string `json:"type" yaml:"type"`
	// Status is True, False or Unknown.
	Status string `json:"status" yaml:"status"`
	// Reason is a short CamelCase word.
	Reason string `json:"reason,omitempty" yaml:"reason,omitempty"`
	// Message says what was seen and where.
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	// Since is when Status last changed, RFC 3339.
	Since string `json:"since,omitempty" yaml:"since,omitempty"`
}
