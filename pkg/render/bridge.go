package render

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// NodePodCIDR is a member's pod range in bridge mode: the index-th /24 of
// clusterCidr, index being its position among the members (control planes
// first).
func NodePodCIDR(clusterCIDR string, index int) (string, error) {
	_, n, err := net.ParseCIDR(clusterCIDR)
	if err != nil || n.IP.To4() == nil {
		return "", fmt.Errorf("render bridge: clusterCidr %q is not an IPv4 CIDR: %w", clusterCIDR, ErrInvalid)
	}
	ones, _ := n.Mask.Size()
	if ones > 24 || index < 0 || index >= 1<<(24-ones) {
		return "", fmt.Errorf("render bridge: clusterCidr %s has no /24 number %d: %w", clusterCIDR, index, ErrInvalid)
	}
	ip := n.IP.To4()
	v := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 + uint32(index)<<8
	return fmt.Sprintf("%d.%d.%d.0/24", v>>24, v>>16&0xff, v>>8&0xff), nil
}

// bridgeCNI renders bridge mode for one member: the bridge CNI config over its
// /24, routes to the other members' /24s, and kube-proxy.
func (r *renderer) bridgeCNI(b *builder, m api.ClusterNode, index int) error {
	subnet, err := NodePodCIDR(r.c.Spec.ClusterCIDR, index)
	if err != nil {
		return err
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "kcore-bridge",
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      "kcore0",
				"isGateway":   true,
				"ipMasq":      true,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":   "host-local",
					"ranges": [][]map[string]string{{{"subnet": subnet}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	raw, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return fmt.Errorf("render bridge cni: %w", err)
	}
	b.file(BridgeCNIPath, modeConfig, string(raw)+"\n", false)
	if err := r.bridgeRoutes(b, m); err != nil {
		return err
	}
	return r.kubeProxy(b, m)
}

// bridgeRoutes routes every other member's /24 via its advertise address,
// loaded with `ip -batch` (route replace is idempotent).
func (r *renderer) bridgeRoutes(b *builder, m api.ClusterNode) error {
	var w strings.Builder
	for i, n := range r.c.Spec.Members() {
		if n.NodeID == m.NodeID {
			continue
		}
		subnet, err := NodePodCIDR(r.c.Spec.ClusterCIDR, i)
		if err != nil {
			return err
		}
		fmt.Fprintf(&w, "route replace %s via %s\n", subnet, n.AdvertiseAddress)
	}
	if w.Len() == 0 {
		return nil
	}
	b.file(BridgeRoutesPath, modeConfig, w.String(), false)
	b.task(api.Task{Name: TaskBridgeRoutes, Argv: []string{"ip", "-batch", BridgeRoutesPath}}, BridgeRoutesPath)
	return nil
}

// kubeProxy renders kube-proxy (iptables mode), which only bridge mode runs.
func (r *renderer) kubeProxy(b *builder, m api.ClusterNode) error {
	conf := strings.Join([]string{
		"# KubeProxyConfiguration rendered by kcore for cluster " + r.c.Metadata.Name + ".",
		"apiVersion: kubeproxy.config.k8s.io/v1alpha1",
		"kind: KubeProxyConfiguration",
		"bindAddress: 0.0.0.0",
		"clientConnection:",
		"  kubeconfig: " + KubeProxyKubeconfigPath,
		"clusterCIDR: " + r.c.Spec.ClusterCIDR,
		"healthzBindAddress: 127.0.0.1:" + strconv.Itoa(KubeProxyHealthzPort),
		"metricsBindAddress: 127.0.0.1:10249",
		"hostnameOverride: " + m.NodeID,
		"mode: iptables",
		"",
	}, "\n")
	b.file(KubeProxyConfigPath, modeConfig, conf, false)
	b.unit(api.Unit{
		Name:      UnitKubeProxy,
		Argv:      []string{"kube-proxy", "--config=" + KubeProxyConfigPath},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("http://127.0.0.1:%d/healthz", KubeProxyHealthzPort),
	}, []string{KubeProxyConfigPath, KubeProxyKubeconfigPath}, r.k8sExtra())
	return nil
}
