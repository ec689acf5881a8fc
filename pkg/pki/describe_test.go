package pki

import (
	"slices"
	"strings"
	"testing"
)

// TestDescribeMatchesIssued checks that Describe names exactly the subjects
// and SANs Ensure puts into the certificates it issues.
func TestDescribeMatchesIssued(t *testing.T) {
	c := labCluster()
	s, err := IssueClusterSecrets(c, testNow())
	if err != nil {
		t.Fatal(err)
	}
	desc, err := Describe(c)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := leafRequests(c)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]IssuedCert{}
	for _, d := range desc {
		byName[d.Name] = d
	}
	for _, r := range reqs {
		if r.remove {
			continue
		}
		d, ok := byName[r.name]
		if !ok {
			t.Fatalf("Describe misses %s", r.name)
		}
		cert, err := ParseCert(r.slot(s).CertPEM)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		var ips []string
		for _, ip := range cert.IPAddresses {
			ips = append(ips, ip.String())
		}
		if cert.Subject.CommonName != d.CommonName || !sameSet(ips, d.IPs) || !sameSet(cert.DNSNames, d.DNSNames) || !sameSet(cert.Subject.Organization, d.Organization) {
			t.Errorf("%s: issued %s %v %v, described %s %v %v", r.name, cert.Subject.CommonName, ips, cert.DNSNames, d.CommonName, d.IPs, d.DNSNames)
		}
	}
	apiCert := byName["controlPlanes/node-105/apiServer"]
	if len(apiCert.IPs)+len(apiCert.DNSNames) < 7 {
		t.Errorf("API server SANs %s: want the address, 127.0.0.1, the VIP, the service IP and the kubernetes names", apiCert.SANs())
	}
}

// TestPlaceholderHasNoKeysAndFollowsRequests checks that a placeholder
// holds no PEM key material and that its certificates change exactly when
// a certificate request changes (a VIP move changes only API server certs).
func TestPlaceholderHasNoKeysAndFollowsRequests(t *testing.T) {
	c := labCluster()
	a, err := Placeholder(c)
	if err != nil {
		t.Fatal(err)
	}
	for id, cp := range a.ControlPlanes {
		for _, kp := range []KeyPair{cp.APIServer, cp.Admin, cp.EtcdPeer, a.CA, a.ServiceAccount} {
			if !IsPlaceholder(kp.CertPEM) || !IsPlaceholder(kp.KeyPEM) || strings.Contains(string(kp.KeyPEM), "PRIVATE KEY-----") {
				t.Fatalf("%s: placeholder holds something that is not a placeholder: %q", id, kp.KeyPEM)
			}
		}
	}
	if !strings.Contains(string(a.ControlPlanes["node-105"].APIServer.CertPEM), "192.168.40.200") {
		t.Errorf("apiserver placeholder lacks the VIP: %s", a.ControlPlanes["node-105"].APIServer.CertPEM)
	}
	c2 := labCluster()
	c2.Spec.HighAvailability.VIPAddress = "192.168.40.201"
	c2.Spec.APIServerEndpoint = "192.168.40.201:6443"
	b, err := Placeholder(c2)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for id, cp := range a.ControlPlanes {
		o := b.ControlPlanes[id]
		if string(cp.APIServer.CertPEM) != string(o.APIServer.CertPEM) {
			changed = append(changed, id+"/apiServer")
		}
		if string(cp.EtcdServer.CertPEM) != string(o.EtcdServer.CertPEM) || string(cp.Admin.CertPEM) != string(o.Admin.CertPEM) {
			changed = append(changed, id+"/other")
		}
	}
	slices.Sort(changed)
	if !slices.Equal(changed, []string{"node-105/apiServer", "node-107/apiServer"}) {
		t.Errorf("a VIP move changes %v, want only the API server certificates", changed)
	}
}
