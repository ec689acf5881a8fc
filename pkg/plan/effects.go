package plan

import (
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// scope says which nodes an effect runs on.
type scope int

const (
	onControlPlanes scope = iota // every control plane
	onAllNodes                   // every member
	onBootstrap                  // the first control plane, where the add-on units run
	onChangedNode                // the node of the changed entry (a node or volume)
)

// effect is one step a field change implies.
type effect struct {
	scope      scope
	component  string // "" means the changed volume's component
	action     string
	disruption string
	detail     func(c change, cur *api.KubernetesCluster) string
}

// rule maps a changed field to the steps it implies. key is the field path
// with list indexes removed; when, if set, narrows the rule to some changes.
// A change no rule matches is only recorded: it restarts nothing.
type rule struct {
	key     string
	when    func(c change, cur *api.KubernetesCluster) bool
	effects []effect
}

func text(s string) func(change, *api.KubernetesCluster) string {
	return func(change, *api.KubernetesCluster) string { return s }
}

// rules is the table from field paths to affected components. Fields that
// cannot change in place (CIDRs, cni, membership, a volume's class) have no
// rule: they are blocked before steps are computed.
func rules() []rule {
	ciliumOn := func(_ change, cur *api.KubernetesCluster) bool { return cur.Spec.CNI == api.CNICilium }
	reinstall := effect{onBootstrap, ComponentCilium, StepReinstall, DisruptionRestartUnit, func(c change, _ *api.KubernetesCluster) string {
		return "`cilium upgrade` with the new " + lastSegment(c.Path) + "; the Cilium agents restart node by node, pod networking pauses briefly on each"
	}}
	restartKubelet := effect{onAllNodes, ComponentKubelet, StepRestart, DisruptionRestartUnit, func(c change, _ *api.KubernetesCluster) string {
		return "restart kubelet for the new " + lastSegment(c.Path) + "; running pods keep running"
	}}
	reissue := effect{onControlPlanes, ComponentCertificates, StepReissue, DisruptionCertReissue, func(_ change, cur *api.KubernetesCluster) string {
		return "reissue the kube-apiserver serving certificate (SANs include " + apiHost(cur.Spec.APIServerEndpoint) + ") and rewrite /etc/kubernetes/admin.conf"
	}}
	restartAPI := effect{onControlPlanes, ComponentAPIServer, StepRestart, DisruptionRestartUnit, text("restart to load the new configuration; one control plane at a time, the API stays up")}
	moveVIP := effect{onControlPlanes, ComponentKeepalived, StepRestart, DisruptionVIPMove, func(c change, cur *api.KubernetesCluster) string {
		return fmt.Sprintf("restart with VIP %s/24 on %s; clients of the old VIP lose it while it moves", cur.Spec.HighAvailability.VIPAddress, cur.Spec.HighAvailability.VIPInterface)
	}}
	provisioner := effect{onBootstrap, ComponentProvisioner, StepApply, DisruptionNone, func(_ change, cur *api.KubernetesCluster) string { return provisionerDetail(cur) }}
	shared := func(_ change, cur *api.KubernetesCluster) bool {
		return cur.Spec.LocalProvisioner.Mode == api.ProvisionerModeShared
	}
	const vols = "spec.localProvisioner.volumes[]"
	return []rule{
		{key: "spec.clusterDns", effects: []effect{restartKubelet}},
		{key: "spec.apiServerEndpoint", when: hostChanged, effects: []effect{reissue, restartAPI, restartKubelet}},
		{key: "spec.apiServerEndpoint", when: portChanged, effects: []effect{
			{onControlPlanes, ComponentFirewall, StepApply, DisruptionNone, text("accept the new API port")},
			restartAPI,
			{onControlPlanes, ComponentControllerManager, StepRestart, DisruptionRestartUnit, text("its kubeconfig points at the new API port")},
			{onControlPlanes, ComponentScheduler, StepRestart, DisruptionRestartUnit, text("its kubeconfig points at the new API port")},
			restartKubelet,
		}},
		{key: "spec.apiServerEndpoint", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.apiServerEndpoint", when: func(c change, cur *api.KubernetesCluster) bool {
			return portChanged(c, cur) && cur.Spec.HighAvailability.Enabled && cur.Spec.HighAvailability.HealthCheckEnabled()
		}, effects: []effect{{onControlPlanes, ComponentKeepalived, StepRestart, DisruptionRestartUnit, text("its /readyz check follows the new API port")}}},
		{key: "spec.highAvailability.vipAddress", when: haOn, effects: []effect{moveVIP, reissue, restartAPI}},
		{key: "spec.highAvailability.vipInterface", when: haOn, effects: []effect{moveVIP}},
		{key: "spec.highAvailability.enabled", when: haOn, effects: []effect{
			{onControlPlanes, ComponentFirewall, StepApply, DisruptionNone, text("accept VRRP (protocol 112) and mark it NOTRACK")},
			{onControlPlanes, ComponentKeepalived, StepStart, DisruptionVIPMove, func(_ change, cur *api.KubernetesCluster) string {
				return "start keepalived; VIP " + cur.Spec.HighAvailability.VIPAddress + " comes up on one control plane"
			}},
			reissue, restartAPI,
		}},
		{key: "spec.highAvailability.enabled", when: not(haOn), effects: []effect{
			{onControlPlanes, ComponentKeepalived, StepStop, DisruptionVIPMove, func(c change, _ *api.KubernetesCluster) string { return "stop keepalived; the VIP is released" }},
			{onControlPlanes, ComponentFirewall, StepApply, DisruptionNone, text("drop the VRRP rules")},
		}},
		{key: "spec.highAvailability.healthCheck", when: haOn, effects: []effect{{onControlPlanes, ComponentKeepalived, StepRestart, DisruptionRestartUnit, func(c change, _ *api.KubernetesCluster) string {
			if c.New == "true" {
				return "restart with the /readyz check: the VIP leaves a node whose API server fails"
			}
			return "restart without the /readyz check"
		}}}},
		{key: "spec.cilium.mode", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.cilium.tunnel", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.cilium.autoDirectNodeRoutes", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.cilium.mtu", when: ciliumOn, effects: []effect{{onBootstrap, ComponentCilium, StepReinstall, DisruptionRestartUnit, text("`cilium upgrade` with the new MTU; agents restart node by node and running pods keep the old MTU until they are recreated")}}},
		{key: "spec.cilium.loadBalancerIpPools", when: both(ciliumOn, poolsStayNonEmpty), effects: []effect{{onBootstrap, ComponentCilium, StepApply, DisruptionNone, func(_ change, cur *api.KubernetesCluster) string {
			return "re-apply pool and L2 policy kcore (" + strings.Join(cur.Spec.Cilium.LoadBalancerIPPools, ", ") + ") from /etc/kubernetes/cilium-l2.yaml; no restart"
		}}}},
		{key: "spec.cilium.loadBalancerIpPools", when: both(ciliumOn, not(poolsStayNonEmpty)), effects: []effect{{onBootstrap, ComponentCilium, StepReinstall, DisruptionRestartUnit, text("`cilium upgrade` toggles l2announcements.enabled and applies or deletes pool and policy kcore; agents restart node by node")}}},
		{key: "spec.controlPlaneNodes[].iface", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.workerNodes[].iface", when: ciliumOn, effects: []effect{reinstall}},
		{key: "spec.scheduleOnControlPlane", when: newTrue, effects: []effect{{onControlPlanes, ComponentKubelet, StepUntaint, DisruptionNone, text("remove the NoSchedule taint node-role.kubernetes.io/control-plane; no restart")}}},
		{key: "spec.scheduleOnControlPlane", when: not(newTrue), effects: []effect{{onControlPlanes, ComponentKubelet, StepTaint, DisruptionNone, text("add the NoSchedule taint node-role.kubernetes.io/control-plane; no restart, running pods stay")}}},
		{key: "spec.localProvisioner.enabled", effects: []effect{provisioner}},
		{key: "spec.localProvisioner.storageClassName", when: shared, effects: []effect{{onBootstrap, ComponentProvisioner, StepApply, DisruptionNone, func(c change, cur *api.KubernetesCluster) string {
			return provisionerDetail(cur) + "; claims bound to StorageClass " + c.Old + " keep it"
		}}}},
		{key: vols, when: added, effects: []effect{{onChangedNode, "", StepCreate, DisruptionNone, nil}}},
		{key: vols, when: both(added, shared), effects: []effect{provisioner}},
		{key: vols, when: not(added), effects: []effect{{onChangedNode, "", StepKeep, DisruptionNone, func(c change, cur *api.KubernetesCluster) string {
			return "unmount and keep " + api.VolumeName(cur.Metadata.Name, c.node, c.volume) + " with its data; remove it by hand when no longer needed"
		}}}},
		{key: vols, when: both(not(added), shared), effects: []effect{provisioner}},
		{key: vols + ".sizeBytes", when: grown, effects: []effect{{onChangedNode, "", StepGrow, DisruptionVolumeGrow, nil}}},
		{key: vols + ".mountPath", effects: []effect{{onChangedNode, "", StepRemount, DisruptionRestartUnit, func(c change, _ *api.KubernetesCluster) string {
			return "unmount from " + c.Old + " and mount at " + c.New + "; pods using this path on the node must restart"
		}}, provisioner}},
	}
}

func haOn(_ change, cur *api.KubernetesCluster) bool  { return cur.Spec.HighAvailability.Enabled }
func newTrue(c change, _ *api.KubernetesCluster) bool { return c.New == "true" }
func added(c change, _ *api.KubernetesCluster) bool   { return c.Old == "" }
func grown(c change, _ *api.KubernetesCluster) bool   { return c.newSize > c.oldSize }

func poolsStayNonEmpty(c change, _ *api.KubernetesCluster) bool { return c.Old != "" && c.New != "" }

func hostChanged(c change, _ *api.KubernetesCluster) bool { return apiHost(c.Old) != apiHost(c.New) }
func portChanged(c change, _ *api.KubernetesCluster) bool { return apiPort(c.Old) != apiPort(c.New) }

type pred = func(change, *api.KubernetesCluster) bool

func not(p pred) pred { return func(c change, cur *api.KubernetesCluster) bool { return !p(c, cur) } }

func both(a, b pred) pred {
	return func(c change, cur *api.KubernetesCluster) bool { return a(c, cur) && b(c, cur) }
}
