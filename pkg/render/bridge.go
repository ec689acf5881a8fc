package render

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// NodePodCIDR is a member's pod range in bridge mode: the /24 of clusterCidr
// numbered by its IPv4 advertise address modulo the number of /24s (the last
// octet in a /16: 192.168.40.105 gets 10.244.105.0/24). It depends on the
// member's own address only, so adding or removing other members never moves
// a node's pods to another range.
func NodePodCIDR(clusterCIDR, advertiseAddress string) (string, error) {
	_, n, err := net.ParseCIDR(clusterCIDR)
	if err != nil || n.IP.To4() == nil {
		return "", fmt.Errorf("render bridge: clusterCidr %q is not an IPv4 CIDR: %w", clusterCIDR, ErrInvalid)
	}
	ones, _ := n.Mask.Size()
	if ones > 24 {
		return "", fmt.Errorf("render bridge: clusterCidr %s is smaller than a /24: %w", clusterCIDR, ErrInvalid)
	}
	addr := net.ParseIP(advertiseAddress).To4()
	if addr == nil {
		return "", fmt.Errorf("render bridge: advertise address %q is not IPv4: %w", advertiseAddress, ErrInvalid)
	}
	index := binary.BigEndian.Uint32(addr) % (1 << (24 - ones))
	v := binary.BigEndian.Uint32(n.IP.To4()) + index<<8
	return fmt.Sprintf("%d.%d.%d.0/24", v>>24, v>>16&0xff, v>>8&0xff), nil
}

// podCIDRs returns every member's pod /24, by node id, and ErrInvalid when
// two members' addresses map to the same /24.
func podCIDRs(s *api.ClusterSpec) (map[string]string, error) {
	out := map[string]string{}
	owner := map[string]string{}
	for _, n := range s.Members() {
		subnet, err := NodePodCIDR(s.ClusterCIDR, n.AdvertiseAddress)
		if err != nil {
			return nil, err
		}
		if other, ok := owner[subnet]; ok {
			return nil, fmt.Errorf("render bridge: %s and %s both get pod range %s from clusterCidr %s: %w", other, n.NodeID, subnet, s.ClusterCIDR, ErrInvalid)
		}
		owner[subnet] = n.NodeID
		out[n.NodeID] = subnet
	}
	return out, nil
}

// bridgeCNI renders bridge mode for one member: the bridge CNI config over its
// /24, routes to the other members' /24s, and kube-proxy.
func (r *renderer) bridgeCNI(b *builder, m api.ClusterNode) error {
	subnet := r.podCIDRs[m.NodeID]
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
					"type":    "host-local",
					"dataDir": CNIIPAMDir,
					"ranges":  [][]map[string]string{{{"subnet": subnet}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}
	raw, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return fmt.Errorf("render bridge cni: %w", err)
	}
	b.file(r.l.BridgeCNI, modeConfig, string(raw)+"\n", false, "bridge CNI configuration, pod CIDR "+r.podCIDRs[m.NodeID])
	if err := r.bridgeRoutes(b, m); err != nil {
		return err
	}
	return r.kubeProxy(b, m)
}

// bridgeRoutes routes every other member's /24 via its advertise address,
// loaded with `ip -batch` (route replace is idempotent).
func (r *renderer) bridgeRoutes(b *builder, m api.ClusterNode) error {
	var w strings.Builder
	for _, n := range r.c.Spec.Members() {
		if n.NodeID == m.NodeID {
			continue
		}
		fmt.Fprintf(&w, "route replace %s via %s\n", r.podCIDRs[n.NodeID], n.AdvertiseAddress)
	}
	if w.Len() == 0 {
		return nil
	}
	b.file(r.l.BridgeRoutes, modeConfig, w.String(), false, "routes to the other members' pod CIDRs")
	b.task(api.Task{Name: r.l.TaskBridgeRoutes, Argv: []string{"ip", "-batch", r.l.BridgeRoutes}, Reason: "load the pod CIDR routes"}, r.l.BridgeRoutes)
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
		"  kubeconfig: " + r.l.KubeProxyKubeconfig,
		"clusterCIDR: " + r.c.Spec.ClusterCIDR,
		"healthzBindAddress: 127.0.0.1:" + strconv.Itoa(r.l.KubeProxyHealthzPort),
		"metricsBindAddress: 127.0.0.1:10249",
		"hostnameOverride: " + m.NodeID,
		"mode: iptables",
	}, "\n") + "\n"
	if r.opts.Profile == ProfileLab {
		// Lab nodes share the host's kernel: conntrack limits and timeouts
		// are the host's, and a network namespace may not set them (0 leaves
		// them as they are).
		conf += "conntrack:\n  maxPerCore: 0\n  tcpEstablishedTimeout: 0s\n  tcpCloseWaitTimeout: 0s\n"
	}
	b.file(r.l.KubeProxyConfig, modeConfig, conf, false, "kube-proxy configuration, cluster CIDR "+r.c.Spec.ClusterCIDR)
	v := r.release(m.NodeID, false)
	// On a control plane kube-proxy starts once the API server beside it
	// is ready: started with it, client-go's back-off while no API answers
	// (up to 30 s between attempts) outlasts the API server's own start.
	var after []string
	if _, isCP := r.cpIndex[m.NodeID]; isCP {
		after = []string{r.l.UnitAPIServer}
	}
	b.unit(api.Unit{
		Name:      r.l.UnitKubeProxy,
		Reason:    "kube-proxy in iptables mode (bridge CNI)",
		Version:   v,
		After:     after,
		Argv:      []string{"kube-proxy", "--config=" + r.l.KubeProxyConfig},
		Restart:   api.RestartAlways,
		HealthURL: fmt.Sprintf("http://127.0.0.1:%d/healthz", r.l.KubeProxyHealthzPort),
	}, []string{r.l.KubeProxyConfig, r.l.KubeProxyKubeconfig, r.l.PKI("ca.crt"),
		r.l.PKI(KubeProxyClientPair + ".crt"), r.l.PKI(KubeProxyClientPair + ".key")}, k8sExtra(v))
	// Its kubeconfig names its client pair by path: client-go reloads it.
	b.reloading(r.l.PKI(KubeProxyClientPair+".crt"), r.l.PKI(KubeProxyClientPair+".key"))
	return nil
}
