package render

import (
	"fmt"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render/kubeflags"
)

// kubelet renders every member's kubelet: its KubeletConfiguration and unit.
// Control planes are tainted NoSchedule unless scheduleOnControlPlane.
func (r *renderer) kubelet(b *builder, m api.ClusterNode, controlPlane bool) error {
	b.file(r.l.KubeletConfig, modeConfig, r.kubeletConfig(), false, "KubeletConfiguration, cluster DNS "+r.c.Spec.ClusterDNS)
	taint := controlPlane && !r.c.Spec.ScheduleOnControlPlane
	argv := r.argv(kubeflags.Kubelet, m, kubeflags.Inputs{
		AdvertiseAddress: m.AdvertiseAddress,
		Kubeconfig:       r.l.KubeletKubeconfig,
		KubeletConfig:    r.l.KubeletConfig,
		KubeletRootDir:   r.l.KubeletRootDir,
		Taint:            taint,
	})
	reason := "kubelet registering " + m.NodeID + " with node IP " + m.AdvertiseAddress
	if taint {
		reason += ", tainted node-role.kubernetes.io/control-plane:NoSchedule"
	}
	reads := []string{r.l.KubeletConfig, r.l.KubeletKubeconfig, r.l.PKI("ca.crt"), r.l.PKI("kubelet.crt"), r.l.PKI("kubelet.key"),
		r.l.PKI(KubeletClientPair + ".crt"), r.l.PKI(KubeletClientPair + ".key")}
	if r.bridge {
		reads = append(reads, r.l.BridgeCNI)
	}
	v := r.release(m.NodeID, false)
	b.unit(api.Unit{
		Name:      r.l.UnitKubelet,
		Reason:    reason,
		Version:   v,
		Argv:      argv,
		After:     []string{UnitContainerd},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("http://127.0.0.1:%d/healthz", r.l.KubeletHealthzPort),
	}, reads, k8sExtra(v))
	// kubelet reloads its serving pair (ReloadKubeletServerCertificateFile)
	// and, through client-go, the client pair its kubeconfig names by path;
	// its client CA (ca.crt) is hashed whole.
	b.reloading(
		r.l.PKI("kubelet.crt"), r.l.PKI("kubelet.key"),
		r.l.PKI(KubeletClientPair+".crt"), r.l.PKI(KubeletClientPair+".key"),
	)
	return nil
}

// kubeletConfig is the KubeletConfiguration YAML, identical on every member.
func (r *renderer) kubeletConfig() string {
	var w strings.Builder
	line := func(s string) { w.WriteString(s + "\n") }
	line("# KubeletConfiguration rendered by kcore for cluster " + r.c.Metadata.Name + ".")
	if r.opts.Profile == ProfileLab {
		line("# Profile lab: tolerates cgroup v1, swap and hosts that cannot create QoS cgroups.")
	}
	line("apiVersion: kubelet.config.k8s.io/v1beta1")
	line("kind: KubeletConfiguration")
	kubeflags.WriteYAML(&w, kubeflags.KubeletConfig(kubeflags.KubeletConfigInputs{
		ClientCAFile:             r.l.PKI("ca.crt"),
		TLSCertFile:              r.l.PKI("kubelet.crt"),
		TLSKeyFile:               r.l.PKI("kubelet.key"),
		CgroupDriver:             r.opts.CgroupDriver,
		ClusterDNS:               r.c.Spec.ClusterDNS,
		ClusterDomain:            r.opts.ClusterDomain,
		ContainerRuntimeEndpoint: r.opts.ContainerRuntimeEndpoint,
		HealthzPort:              r.l.KubeletHealthzPort,
		MaxPods:                  r.opts.MaxPods,
		PodLogsDir:               PodLogsDir,
		Lab:                      r.opts.Profile == ProfileLab,
	}))
	return w.String()
}
