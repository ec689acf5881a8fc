package plan

import (
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// componentOf names the component a rendered item belongs to, from
// render's names: a unit or task by its name, a file by what reads it
// (certificates and kubeconfigs are "certificates"), a volume by its
// manifest name.
// l is the cluster's layout: names in any slot map to the reference's.
func componentOf(it ItemChange, l render.Layout, node string) string {
	name := l.Reference(it.Name)
	switch it.Kind {
	case KindVolume:
		return ComponentVolumePrefix + strings.TrimPrefix(it.Name, api.VolumeName(l.Cluster, node, ""))
	case KindUnit, KindTask:
		if c, ok := processComponents()[name]; ok {
			return c
		}
		return it.Name
	}
	if c, ok := fileComponents()[name]; ok {
		return c
	}
	if strings.HasPrefix(name, render.PKIDir+"/") {
		return ComponentCertificates
	}
	if strings.HasPrefix(it.Name, render.ContainerdCertsDir+"/") {
		return ComponentContainerd
	}
	if strings.HasPrefix(it.Name, render.DefaultEtcdDataDir) {
		return ComponentEtcd
	}
	return ComponentFiles
}

func processComponents() map[string]string {
	return map[string]string{
		render.UnitEtcd:              ComponentEtcd,
		render.UnitEtcdRestore:       ComponentEtcd,
		render.UnitEtcdBackup:        ComponentEtcdBackup,
		render.UnitAPIServer:         ComponentAPIServer,
		render.UnitControllerManager: ComponentControllerManager,
		render.UnitScheduler:         ComponentScheduler,
		render.UnitKubelet:           ComponentKubelet,
		render.UnitContainerd:        ComponentContainerd,
		render.UnitKubeProxy:         ComponentKubeProxy,
		render.UnitKeepalived:        ComponentKeepalived,
		render.UnitCilium:            ComponentCilium,
		render.TaskCiliumL2:          ComponentCilium,
		render.TaskFirewallVRRP:      ComponentFirewall,
		render.TaskProvisioner:       ComponentProvisioner,
		render.TaskAddons:            ComponentAddons,
		render.TaskKubeDNS:           ComponentAddons,
		render.TaskBridgeRoutes:      ComponentBridgeCNI,
	}
}

func fileComponents() map[string]string {
	return map[string]string{
		render.AdminKubeconfigPath:             ComponentCertificates,
		render.ControllerManagerKubeconfigPath: ComponentCertificates,
		render.SchedulerKubeconfigPath:         ComponentCertificates,
		render.KubeletKubeconfigPath:           ComponentCertificates,
		render.KubeProxyKubeconfigPath:         ComponentCertificates,
		render.KubeletConfigPath:               ComponentKubelet,
		render.ContainerdConfigPath:            ComponentContainerd,
		render.KubeProxyConfigPath:             ComponentKubeProxy,
		render.KeepalivedConfigPath:            ComponentKeepalived,
		render.VRRPFirewallPath:                ComponentFirewall,
		render.CiliumL2Path:                    ComponentCilium,
		render.ProvisionerPath:                 ComponentProvisioner,
		render.RBACPath:                        ComponentAddons,
		render.CoreDNSPath:                     ComponentAddons,
		render.KubeDNSServicePath:              ComponentAddons,
		render.BridgeCNIPath:                   ComponentBridgeCNI,
		render.BridgeRoutesPath:                ComponentBridgeCNI,
	}
}

// componentRank orders a node's steps: identity and network first, then
// etcd, the control plane, keepalived, containerd, kubelet, volumes, and the
// cluster add-ons.
func componentRank(c string) int {
	order := []string{
		ComponentCertificates, ComponentFirewall, ComponentFiles, ComponentEtcd, ComponentEtcdBackup, ComponentAPIServer,
		ComponentControllerManager, ComponentScheduler, ComponentKeepalived, ComponentContainerd, ComponentKubelet,
		ComponentBridgeCNI, ComponentKubeProxy, ComponentVolumePrefix, ComponentMembership,
		ComponentCilium, ComponentAddons, ComponentProvisioner,
	}
	for i, o := range order {
		if c == o || (o == ComponentVolumePrefix && strings.HasPrefix(c, o)) {
			return i
		}
	}
	return len(order)
}

// isAddon reports whether a component is a cluster add-on that runs once, on
// the bootstrap control plane, after the per-node steps.
func isAddon(component string) bool {
	return component == ComponentCilium || component == ComponentProvisioner || component == ComponentAddons
}
