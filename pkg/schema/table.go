package schema

import "kcore.dev/kcore/pkg/api"

// constraint is what the Go types cannot say about a field: its allowed
// values, its default and its lower bound.
type constraint struct {
	enum    []string
	def     any
	minimum *int64
}

// constraints maps "Kind.json.path" (list elements as "[]") to the allowed
// values and defaults the reference and pkg/api define. table_test.go checks
// every entry against api.Default, api.Validate and api.CanonicalKind.
func constraints() map[string]constraint {
	one := int64(1)
	iface := constraint{def: api.DefaultIface}
	return map[string]constraint{
		"KubernetesCluster.apiVersion": {enum: []string{api.APIVersion}},
		"KubernetesCluster.kind":       {enum: []string{api.KindKubernetesCluster, "kubernetes-cluster", "kubernetes_cluster"}},

		"KubernetesCluster.spec.clusterDns":                              {def: api.DefaultClusterDNS},
		"KubernetesCluster.spec.cni":                                     {enum: []string{api.CNICilium, api.CNIBridge}, def: api.DefaultCNI},
		"KubernetesCluster.spec.cilium.mode":                             {enum: []string{api.DefaultCiliumMode, "tunnel"}, def: api.DefaultCiliumMode},
		"KubernetesCluster.spec.cilium.mtu":                              {def: api.DefaultCiliumMTU},
		"KubernetesCluster.spec.cilium.tunnel":                           {enum: []string{api.DefaultCiliumTunnel, "vxlan", "geneve"}, def: api.DefaultCiliumTunnel},
		"KubernetesCluster.spec.cilium.autoDirectNodeRoutes":             {def: true},
		"KubernetesCluster.spec.controlPlaneNodes[].iface":               iface,
		"KubernetesCluster.spec.workerNodes[].iface":                     iface,
		"KubernetesCluster.spec.highAvailability.healthCheck":            {def: true},
		"KubernetesCluster.spec.localProvisioner.storageClassName":       {def: api.DefaultStorageClassName},
		"KubernetesCluster.spec.localProvisioner.mode":                   {enum: []string{api.ProvisionerModeShared, api.ProvisionerModeLVM}, def: api.ProvisionerModeShared},
		"KubernetesCluster.spec.localProvisioner.volumes[].storageClass": {enum: []string{api.StorageClassLVM, api.StorageClassZFS, api.StorageClassDisk}},
		"KubernetesCluster.spec.localProvisioner.volumes[].sizeBytes":    {minimum: &one},
		"KubernetesCluster.spec.localProvisioner.volumes[].fsType":       {enum: []string{api.FSTypeExt4, api.FSTypeXFS}, def: api.DefaultFSType},
		"KubernetesCluster.spec.localProvisioner.volumes[].role":         {enum: []string{api.VolumeRoleFilesystem, api.VolumeRolePool}, def: api.VolumeRoleFilesystem},
		"KubernetesCluster.status.phase":                                 {enum: []string{api.PhaseBootstrapping, api.PhaseReady, api.PhaseDegraded, api.PhaseUpdating, api.PhaseScaling, api.PhaseDeleting}},
		"KubernetesCluster.status.nodes[].role":                          {enum: []string{api.RoleControlPlane, api.RoleWorker}},

		"ClusterUpdate.apiVersion":          {enum: []string{api.APIVersion}},
		"ClusterUpdate.kind":                {enum: []string{api.KindClusterUpdate, "cluster-update", "cluster_update"}},
		"ClusterUpdate.spec.strategy":       {enum: []string{api.StrategyOneAtATime, api.StrategyBatched}, def: api.StrategyOneAtATime},
		"ClusterUpdate.spec.maxUnavailable": {def: 1},
		"ClusterUpdate.spec.batchSize":      {def: 1},
		"ClusterUpdate.spec.activation":     {enum: []string{api.ActivationAuto, api.ActivationReboot}, def: api.ActivationAuto},
		"ClusterUpdate.spec.updateKind":     {enum: []string{api.UpdateKindKcore, api.UpdateKindOS, api.UpdateKindK8s}, def: api.UpdateKindKcore},
		"ClusterUpdate.spec.approval":       {enum: []string{api.ApprovalManual, api.ApprovalAuto}, def: api.ApprovalManual},

		"Node.apiVersion":            {enum: []string{api.APIVersion}},
		"Node.kind":                  {enum: []string{api.KindNode}},
		"Node.facts.storage[].class": {enum: []string{api.StorageClassLVM, api.StorageClassZFS}},
		"NodeState.units[].restart":  {enum: []string{api.RestartAlways, api.RestartOnFailure, api.RestartNever}},
		"NodeState.volumes[].class":  {enum: []string{api.StorageClassLVM, api.StorageClassZFS, api.StorageClassDisk}},
		"NodeState.volumes[].role":   {enum: []string{api.VolumeRoleFilesystem, api.VolumeRolePool}},
	}
}
