package manifest

import (
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// yamlKinds are the kind values a YAML manifest may use; api.CanonicalKind maps
// each to its canonical kind.
func yamlKinds() []string {
	return []string{
		api.KindKubernetesCluster, "kubernetes-cluster", "kubernetes_cluster",
		api.KindClusterUpdate, "cluster-update", "cluster_update",
	}
}

// HCL resource types and the kinds they hold.
const (
	ResourceKubernetesCluster = "kcore_kubernetes_cluster"
	ResourceClusterUpdate     = "kcore_cluster_update"
)

func hclResources() []string {
	return []string{ResourceKubernetesCluster, ResourceClusterUpdate}
}

// kindOfResource maps an HCL resource type to its kind, or "" when unknown.
func kindOfResource(t string) string {
	switch t {
	case ResourceKubernetesCluster:
		return api.KindKubernetesCluster
	case ResourceClusterUpdate:
		return api.KindClusterUpdate
	}
	return ""
}

// newObject returns an empty object of a manifest kind, or nil for a kind that
// cannot be written in a manifest.
func newObject(kind string) any {
	switch kind {
	case api.KindKubernetesCluster:
		return &api.KubernetesCluster{}
	case api.KindClusterUpdate:
		return &api.ClusterUpdate{}
	}
	return nil
}

// unknownKindMessage explains an unknown kind, suggesting the closest one.
func unknownKindMessage(got string) string {
	if api.CanonicalKind(got) == api.KindNode {
		return "kind Node cannot be written in a manifest: nodes register themselves through their agent"
	}
	kinds := yamlKinds()
	msg := "unknown kind " + quote(got)
	if got == "" {
		msg = "required"
	}
	if s := suggest(got, kinds); s != "" && got != "" {
		msg += ", did you mean " + quote(s) + "?"
	}
	return msg + " (accepted: " + strings.Join(kinds, ", ") + ")"
}
