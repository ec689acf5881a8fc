package kubeflags

import (
	"strconv"
	"strings"
)

// ConfigField is one field of the KubeletConfiguration kcore writes, with
// the kubelet flag that would override it: that flag is kcore's too.
type ConfigField struct {
	// Path is the field's dotted YAML path, e.g. authentication.x509.clientCAFile.
	Path string
	// Flag is the kubelet flag that overrides the field ("" when none does).
	Flag string
	// Value is the YAML scalar; List, when set, is written as a block list.
	Value string
	List  []string
}

// KubeletConfigInputs are the values of the KubeletConfiguration.
type KubeletConfigInputs struct {
	// ClientCAFile, TLSCertFile and TLSKeyFile are the kubelet's PKI files.
	ClientCAFile, TLSCertFile, TLSKeyFile string
	// CgroupDriver, ClusterDNS, ClusterDomain and ContainerRuntimeEndpoint
	// are the node's runtime settings.
	CgroupDriver, ClusterDNS, ClusterDomain, ContainerRuntimeEndpoint string
	// HealthzPort and MaxPods are the kubelet's.
	HealthzPort, MaxPods int
	// PodLogsDir is where kubelet keeps pod logs.
	PodLogsDir string
	// Lab tolerates cgroup v1, swap and hosts without QoS cgroups.
	Lab bool
}

// KubeletConfig lists the KubeletConfiguration fields kcore writes, in the
// order they are written.
func KubeletConfig(in KubeletConfigInputs) []ConfigField {
	out := []ConfigField{
		{Path: "authentication.anonymous.enabled", Flag: "anonymous-auth", Value: "false"},
		{Path: "authentication.webhook.enabled", Flag: "authentication-token-webhook", Value: "true"},
		{Path: "authentication.x509.clientCAFile", Flag: "client-ca-file", Value: in.ClientCAFile},
		{Path: "authorization.mode", Flag: "authorization-mode", Value: "Webhook"},
		{Path: "cgroupDriver", Flag: "cgroup-driver", Value: in.CgroupDriver},
		{Path: "clusterDNS", Flag: "cluster-dns", List: []string{in.ClusterDNS}},
		{Path: "clusterDomain", Flag: "cluster-domain", Value: in.ClusterDomain},
		{Path: "containerRuntimeEndpoint", Flag: "container-runtime-endpoint", Value: in.ContainerRuntimeEndpoint},
		{Path: "healthzBindAddress", Flag: "healthz-bind-address", Value: "127.0.0.1"},
		{Path: "healthzPort", Flag: "healthz-port", Value: strconv.Itoa(in.HealthzPort)},
		{Path: "maxPods", Flag: "max-pods", Value: strconv.Itoa(in.MaxPods)},
		{Path: "podLogsDir", Value: in.PodLogsDir},
		{Path: "readOnlyPort", Flag: "read-only-port", Value: "0"},
		{Path: "rotateCertificates", Flag: "rotate-certificates", Value: "false"},
		{Path: "serverTLSBootstrap", Value: "false"},
		{Path: "tlsCertFile", Flag: "tls-cert-file", Value: in.TLSCertFile},
		{Path: "tlsPrivateKeyFile", Flag: "tls-private-key-file", Value: in.TLSKeyFile},
	}
	if in.Lab {
		out = append(out,
			ConfigField{Path: "failCgroupV1", Flag: "fail-cgroupv1", Value: "false"},
			ConfigField{Path: "failSwapOn", Flag: "fail-swap-on", Value: "false"},
			ConfigField{Path: "cgroupsPerQOS", Flag: "cgroups-per-qos", Value: "false"},
			ConfigField{Path: "enforceNodeAllocatable", Flag: "enforce-node-allocatable", Value: "[]"},
		)
	}
	return out
}

// WriteYAML writes fields as YAML, nesting dotted paths: consecutive fields
// that share a parent are written under it once.
func WriteYAML(w *strings.Builder, fields []ConfigField) {
	var prev []string
	for _, f := range fields {
		parts := strings.Split(f.Path, ".")
		parents := parts[:len(parts)-1]
		same := 0
		for same < len(parents) && same < len(prev) && parents[same] == prev[same] {
			same++
		}
		for i := same; i < len(parents); i++ {
			w.WriteString(strings.Repeat("  ", i) + parents[i] + ":\n")
		}
		indent := strings.Repeat("  ", len(parents))
		key := parts[len(parts)-1]
		if f.List != nil {
			w.WriteString(indent + key + ":\n")
			for _, v := range f.List {
				w.WriteString(indent + "  - " + v + "\n")
			}
		} else {
			w.WriteString(indent + key + ": " + f.Value + "\n")
		}
		prev = parents
	}
}
