package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

func labCluster() *api.KubernetesCluster {
	c := &api.KubernetesCluster{
		Metadata: api.ObjectMeta{Name: "lab"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: "192.168.40.200:6443",
			ControlPlaneNodes: []api.ClusterNode{
				{NodeID: "node-105", AdvertiseAddress: "192.168.40.105"},
				{NodeID: "node-107", AdvertiseAddress: "192.168.40.107"},
			},
			WorkerNodes:      []api.ClusterNode{{NodeID: "node-103", AdvertiseAddress: "192.168.40.103"}},
			HighAvailability: api.HASpec{Enabled: true, VIPAddress: "192.168.40.200", VIPInterface: "enp6s0"},
		},
	}
	c.Default()
	return c
}

func testNow() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func TestIssueClusterSecretsIdentities(t *testing.T) {
	c := labCluster()
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	cp := s.ControlPlanes["node-105"]
	tests := []struct {
		name    string
		kp      KeyPair
		ca      KeyPair
		cn      string
		org     []string
		usage   x509.ExtKeyUsage
		ips     []string
		dnsName string
	}{
		{"apiserver", cp.APIServer, s.CA, "kube-apiserver", nil, x509.ExtKeyUsageServerAuth,
			[]string{"127.0.0.1", "192.168.40.200", "192.168.40.105", "10.96.0.1"}, "kubernetes.default.svc.cluster.local"},
		{"etcd server", cp.EtcdServer, s.EtcdCA, "node-105", nil, x509.ExtKeyUsageServerAuth,
			[]string{"192.168.40.105", "127.0.0.1"}, "node-105"},
		{"etcd peer", cp.EtcdPeer, s.EtcdCA, "node-105", nil, x509.ExtKeyUsageClientAuth, nil, ""},
		{"apiserver kubelet client", cp.APIServerKubeletClient, s.CA, APIServerKubeletCommonName, []string{MastersGroup}, x509.ExtKeyUsageClientAuth, nil, ""},
		{"apiserver etcd client", cp.APIServerEtcdClient, s.EtcdCA, APIServerEtcdCommonName, nil, x509.ExtKeyUsageClientAuth, nil, ""},
		{"controller-manager", cp.ControllerManager, s.CA, "system:kube-controller-manager", nil, x509.ExtKeyUsageClientAuth, nil, ""},
		{"scheduler", cp.Scheduler, s.CA, "system:kube-scheduler", nil, x509.ExtKeyUsageClientAuth, nil, ""},
		{"admin", cp.Admin, s.CA, "kcore-admin", []string{"system:masters"}, x509.ExtKeyUsageClientAuth, nil, ""},
		{"front-proxy client", s.FrontProxyClient, s.FrontProxyCA, "front-proxy-client", nil, x509.ExtKeyUsageClientAuth, nil, ""},
		{"kubelet client", s.Nodes["node-103"].KubeletClient, s.CA, "system:node:node-103", []string{"system:nodes"}, x509.ExtKeyUsageClientAuth, nil, ""},
		{"kubelet serving", s.Nodes["node-103"].KubeletServing, s.CA, "system:node:node-103", []string{"system:nodes"}, x509.ExtKeyUsageServerAuth, []string{"192.168.40.103"}, "node-103"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, err := LoadCA(tt.ca)
			if err != nil {
				t.Fatal(err)
			}
			cert, err := ParseCert(tt.kp.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), CurrentTime: testNow(), KeyUsages: []x509.ExtKeyUsage{tt.usage}, DNSName: tt.dnsName}); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if cert.Subject.CommonName != tt.cn || !slices.Equal(cert.Subject.Organization, tt.org) {
				t.Fatalf("subject = %s %v, want %s %v", cert.Subject.CommonName, cert.Subject.Organization, tt.cn, tt.org)
			}
			for _, ip := range tt.ips {
				if err := cert.VerifyHostname(ip); err != nil {
					t.Errorf("SAN %s: %v", ip, err)
				}
			}
			if _, err := tls.X509KeyPair(tt.kp.CertPEM, tt.kp.KeyPEM); err != nil {
				t.Fatalf("key pair: %v", err)
			}
		})
	}
	if len(s.Nodes["node-103"].KubeProxy.CertPEM) != 0 {
		t.Error("kube-proxy certificate issued for a cilium cluster")
	}
	if len(s.ServiceAccount.KeyPEM) == 0 || len(s.ServiceAccount.CertPEM) == 0 {
		t.Error("no service-account key")
	}
}

func TestEnsureIssuesOnlyWhatChanged(t *testing.T) {
	tests := []struct {
		name   string
		change func(c *api.KubernetesCluster)
		at     time.Time
		want   []string
	}{
		{"nothing", func(*api.KubernetesCluster) {}, testNow(), nil},
		{"vip change", func(c *api.KubernetesCluster) {
			c.Spec.HighAvailability.VIPAddress = "192.168.40.201"
			c.Spec.APIServerEndpoint = "192.168.40.201:6443"
		}, testNow(), []string{"controlPlanes/node-105/apiServer", "controlPlanes/node-107/apiServer"}},
		{"add worker", func(c *api.KubernetesCluster) {
			c.Spec.WorkerNodes = append(c.Spec.WorkerNodes, api.ClusterNode{NodeID: "node-109", AdvertiseAddress: "192.168.40.109"})
		}, testNow(), []string{"nodes/node-109/kubeletClient", "nodes/node-109/kubeletServing"}},
		{"remove worker", func(c *api.KubernetesCluster) { c.Spec.WorkerNodes = nil }, testNow(), []string{"nodes/node-103"}},
		{"add control plane", func(c *api.KubernetesCluster) {
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-109", AdvertiseAddress: "192.168.40.109"})
		}, testNow(), []string{
			"controlPlanes/node-109/admin", "controlPlanes/node-109/apiServer", "controlPlanes/node-109/apiServerEtcdClient",
			"controlPlanes/node-109/apiServerKubeletClient", "controlPlanes/node-109/controllerManager",
			"controlPlanes/node-109/etcdPeer", "controlPlanes/node-109/etcdServer", "controlPlanes/node-109/scheduler",
			"nodes/node-109/kubeletClient", "nodes/node-109/kubeletServing",
		}},
		{"remove control plane", func(c *api.KubernetesCluster) { c.Spec.ControlPlaneNodes = c.Spec.ControlPlaneNodes[:1] },
			testNow(), []string{"controlPlanes/node-107", "nodes/node-107"}},
		{"bridge mode", func(c *api.KubernetesCluster) { c.Spec.CNI = api.CNIBridge },
			testNow(), []string{"nodes/node-103/kubeProxy", "nodes/node-105/kubeProxy", "nodes/node-107/kubeProxy"}},
		{"renewal window", func(*api.KubernetesCluster) {}, testNow().Add(ClusterLeafValidity - RenewBefore + time.Hour), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := labCluster()
			s, err := IssueClusterSecrets(c, testNow())
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var stored ClusterSecrets
			if err := json.Unmarshal(raw, &stored); err != nil {
				t.Fatal(err)
			}
			tt.change(c)
			got, err := stored.Ensure(c, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if tt.name == "renewal window" {
				want = allLeaves(c)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Ensure reissued %v, want %v", got, want)
			}
			again, err := stored.Ensure(c, tt.at)
			if err != nil || len(again) != 0 {
				t.Fatalf("second Ensure = %v, %v; want nothing", again, err)
			}
		})
	}
}

// TestAPIServerSANsPerControlPlane checks that an API server certificate names
// its own control plane but no other, so membership changes leave it alone.
func TestAPIServerSANsPerControlPlane(t *testing.T) {
	c := labCluster()
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ node, own, other string }{
		{"node-105", "192.168.40.105", "192.168.40.107"},
		{"node-107", "192.168.40.107", "192.168.40.105"},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			cert, err := ParseCert(s.ControlPlanes[tt.node].APIServer.CertPEM)
			if err != nil {
				t.Fatal(err)
			}
			var ips []string
			for _, ip := range cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			want := []string{tt.own, "127.0.0.1", "192.168.40.200", "10.96.0.1"}
			if !sameSet(ips, want) {
				t.Errorf("IP SANs = %v, want %v", ips, want)
			}
			if slices.Contains(ips, tt.other) {
				t.Errorf("IP SANs %v name the other control plane %s", ips, tt.other)
			}
		})
	}
}

func allLeaves(c *api.KubernetesCluster) []string {
	reqs, err := leafRequests(c)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, r := range reqs {
		if !r.remove {
			out = append(out, r.name)
		}
	}
	slices.Sort(out)
	return out
}

func TestFirstServiceIP(t *testing.T) {
	tests := []struct{ cidr, want string }{
		{"10.96.0.0/12", "10.96.0.1"},
		{"10.43.0.0/16", "10.43.0.1"},
		{"fd00::/108", "fd00::1"},
	}
	for _, tt := range tests {
		got, err := FirstServiceIP(tt.cidr)
		if err != nil || got.String() != tt.want {
			t.Errorf("FirstServiceIP(%s) = %v, %v; want %s", tt.cidr, got, err, tt.want)
		}
	}
	if _, err := FirstServiceIP("nope"); err == nil {
		t.Error("FirstServiceIP accepted garbage")
	}
}

func TestAdminKubeconfig(t *testing.T) {
	c := labCluster()
	if _, err := (&ClusterSecrets{}).AdminKubeconfig(c); !errors.Is(err, ErrNoAdmin) {
		t.Fatalf("empty secrets: %v, want ErrNoAdmin", err)
	}
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	kc, err := s.AdminKubeconfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(kc, "server: https://192.168.40.200:6443") || !strings.Contains(kc, "kcore-admin@lab") {
		t.Fatalf("admin kubeconfig:\n%s", kc)
	}
}
