package plan

import (
	"maps"
	"slices"

	"kcore.dev/kcore/pkg/api"
)

// prepared returns a defaulted deep copy of c that keeps only what a manifest
// sets: kind, name, labels and spec. Status and server-set metadata are dropped
// so that comparisons ignore them. It never modifies c.
func prepared(c *api.KubernetesCluster) *api.KubernetesCluster {
	out := &api.KubernetesCluster{
		Metadata: api.ObjectMeta{Name: c.Metadata.Name, Labels: maps.Clone(c.Metadata.Labels)},
		Spec:     cloneSpec(c.Spec),
	}
	out.Default()
	return out
}

func cloneSpec(s api.ClusterSpec) api.ClusterSpec {
	s.Cilium.LoadBalancerIPPools = slices.Clone(s.Cilium.LoadBalancerIPPools)
	s.Cilium.AutoDirectNodeRoutes = clonePtr(s.Cilium.AutoDirectNodeRoutes)
	s.ControlPlaneNodes = slices.Clone(s.ControlPlaneNodes)
	s.WorkerNodes = slices.Clone(s.WorkerNodes)
	s.HighAvailability.HealthCheck = clonePtr(s.HighAvailability.HealthCheck)
	s.LocalProvisioner.Volumes = slices.Clone(s.LocalProvisioner.Volumes)
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
