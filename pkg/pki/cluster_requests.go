package pki

import (
	"fmt"
	"math/big"
	"net"

	"kcore.dev/kcore/pkg/api"
)

// apiServerDNSNames are the DNS SANs of every kube-apiserver certificate.
func apiServerDNSNames() []string {
	return []string{
		"kubernetes",
		"kubernetes.default",
		"kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local",
		"localhost",
	}
}

// FirstServiceIP returns the first usable address of a service CIDR, the
// ClusterIP of the kubernetes Service (10.96.0.1 for 10.96.0.0/12).
func FirstServiceIP(serviceCIDR string) (net.IP, error) {
	_, n, err := net.ParseCIDR(serviceCIDR)
	if err != nil {
		return nil, fmt.Errorf("parse service cidr %q: %w", serviceCIDR, ErrBadCluster)
	}
	base := n.IP.To4()
	if base == nil {
		base = n.IP.To16()
	}
	v := new(big.Int).SetBytes(base)
	v.Add(v, big.NewInt(1))
	out := make(net.IP, len(base))
	v.FillBytes(out)
	if !n.Contains(out) {
		return nil, fmt.Errorf("service cidr %q has no usable address: %w", serviceCIDR, ErrBadCluster)
	}
	return out, nil
}

// APIServerSANs returns the IP and DNS SANs of the API server certificate of
// the control plane advertising on advertise: that address, the VIP when HA is
// on, the endpoint host, 127.0.0.1, the first service IP, the kubernetes
// service names and localhost. The other control planes' addresses are not
// included (clients reach the API through the endpoint or locally), so adding
// or removing a control plane reissues no other node's certificate.
func APIServerSANs(c *api.KubernetesCluster, advertise string) ([]net.IP, []string, error) {
	s := &c.Spec
	addrs := []string{advertise, "127.0.0.1"}
	var dns []string
	if s.HighAvailability.Enabled && s.HighAvailability.VIPAddress != "" {
		addrs = append(addrs, s.HighAvailability.VIPAddress)
	}
	if host, _, err := net.SplitHostPort(s.APIServerEndpoint); err == nil && host != "" {
		if net.ParseIP(host) != nil {
			addrs = append(addrs, host)
		} else {
			dns = append(dns, host)
		}
	}
	ips, err := parseIPs(addrs...)
	if err != nil {
		return nil, nil, err
	}
	svc, err := FirstServiceIP(s.ServiceCIDR)
	if err != nil {
		return nil, nil, err
	}
	ips = append(ips, svc)
	dns = append(dns, apiServerDNSNames()...)
	return dedupIPs(ips), dns, nil
}

func dedupIPs(ips []net.IP) []net.IP {
	seen := map[string]bool{}
	out := ips[:0]
	for _, ip := range ips {
		if !seen[ip.String()] {
			seen[ip.String()] = true
			out = append(out, ip)
		}
	}
	return out
}

// leafRequests lists every leaf certificate c needs, in a stable order.
func leafRequests(c *api.KubernetesCluster) ([]leafRequest, error) {
	client := func(cn string, org ...string) CertRequest {
		return CertRequest{CommonName: cn, Organization: org, Usage: UsageClient, Validity: ClusterLeafValidity}
	}
	reqs := []leafRequest{{
		name: "frontProxyClient", ca: caFrontProxy, req: client(FrontProxyClientCommonName),
		slot: func(s *ClusterSecrets) *KeyPair { return &s.FrontProxyClient },
	}}
	for _, n := range c.Spec.ControlPlaneNodes {
		id := n.NodeID
		apiIPs, apiDNS, err := APIServerSANs(c, n.AdvertiseAddress)
		if err != nil {
			return nil, err
		}
		ips, err := parseIPs(n.AdvertiseAddress, "127.0.0.1")
		if err != nil {
			return nil, err
		}
		etcdReq := CertRequest{
			CommonName: id, DNSNames: []string{"localhost", id}, IPs: ips,
			Usage: UsageServer | UsageClient, Validity: ClusterLeafValidity,
		}
		cp := func(f func(*ControlPlaneSecrets) *KeyPair) func(*ClusterSecrets) *KeyPair {
			return func(s *ClusterSecrets) *KeyPair { return f(s.ControlPlanes[id]) }
		}
		p := "controlPlanes/" + id + "/"
		reqs = append(reqs,
			leafRequest{name: p + "etcdServer", ca: caEtcd, req: etcdReq,
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.EtcdServer })},
			leafRequest{name: p + "etcdPeer", ca: caEtcd, req: etcdReq,
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.EtcdPeer })},
			leafRequest{name: p + "apiServer", ca: caCluster,
				req: CertRequest{CommonName: "kube-apiserver", DNSNames: apiDNS, IPs: apiIPs,
					Usage: UsageServer, Validity: ClusterLeafValidity},
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.APIServer })},
			leafRequest{name: p + "apiServerKubeletClient", ca: caCluster,
				req:  client(APIServerKubeletCommonName, MastersGroup),
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.APIServerKubeletClient })},
			leafRequest{name: p + "apiServerEtcdClient", ca: caEtcd,
				req:  client(APIServerEtcdCommonName),
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.APIServerEtcdClient })},
			leafRequest{name: p + "controllerManager", ca: caCluster,
				req:  client(ControllerManagerCommonName),
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.ControllerManager })},
			leafRequest{name: p + "scheduler", ca: caCluster,
				req:  client(SchedulerCommonName),
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.Scheduler })},
			leafRequest{name: p + "admin", ca: caCluster,
				req:  client(AdminCommonName, MastersGroup),
				slot: cp(func(x *ControlPlaneSecrets) *KeyPair { return &x.Admin })},
		)
	}
	for _, n := range c.Spec.Members() {
		id := n.NodeID
		ips, err := parseIPs(n.AdvertiseAddress)
		if err != nil {
			return nil, err
		}
		node := func(f func(*NodeSecrets) *KeyPair) func(*ClusterSecrets) *KeyPair {
			return func(s *ClusterSecrets) *KeyPair { return f(s.Nodes[id]) }
		}
		p := "nodes/" + id + "/"
		reqs = append(reqs,
			leafRequest{name: p + "kubeletClient", ca: caCluster,
				req:  client("system:node:"+id, NodesGroup),
				slot: node(func(x *NodeSecrets) *KeyPair { return &x.KubeletClient })},
			leafRequest{name: p + "kubeletServing", ca: caCluster,
				req: CertRequest{CommonName: "system:node:" + id, Organization: []string{NodesGroup},
					DNSNames: []string{id}, IPs: ips, Usage: UsageServer, Validity: ClusterLeafValidity},
				slot: node(func(x *NodeSecrets) *KeyPair { return &x.KubeletServing })},
			leafRequest{name: p + "kubeProxy", ca: caCluster, req: client(KubeProxyCommonName),
				remove: c.Spec.CNI != api.CNIBridge,
				slot:   node(func(x *NodeSecrets) *KeyPair { return &x.KubeProxy })},
		)
	}
	return reqs, nil
}
