package pki

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

func TestIssueVerifiesAgainstCA(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	ca, err := NewCA("kcore test ca", now, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(CertRequest{
		CommonName:   "node-105",
		Organization: []string{"node"},
		DNSNames:     []string{"kubernetes.default"},
		IPs:          []net.IP{net.ParseIP("192.168.40.200")},
		Usage:        UsageServer | UsageClient,
		Validity:     time.Hour,
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ParseCert(kp.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		_, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), CurrentTime: now.Add(time.Minute), KeyUsages: []x509.ExtKeyUsage{usage}, DNSName: "kubernetes.default"})
		if err != nil {
			t.Fatalf("verify usage %v: %v", usage, err)
		}
	}
	if err := cert.VerifyHostname("192.168.40.200"); err != nil {
		t.Fatalf("ip SAN: %v", err)
	}
	if cert.Subject.Organization[0] != "node" {
		t.Fatalf("organization = %v", cert.Subject.Organization)
	}
	if _, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM); err != nil {
		t.Fatalf("key pair does not match: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), CurrentTime: now.Add(2 * time.Hour)}); err == nil {
		t.Fatal("certificate verified after its validity")
	}
}

func TestLoadCARefusesLeaf(t *testing.T) {
	now := time.Now()
	ca, err := NewCA("ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(CertRequest{CommonName: "leaf", Usage: UsageClient, Validity: time.Hour}, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCA(leaf); !errors.Is(err, ErrNotCA) {
		t.Fatalf("LoadCA(leaf) = %v, want ErrNotCA", err)
	}
	again, err := LoadCA(ca.KeyPair)
	if err != nil || !again.Cert().Equal(ca.Cert()) {
		t.Fatalf("LoadCA round trip: %v", err)
	}
}

func TestServiceAccountKeyAndKubeconfig(t *testing.T) {
	sa, err := NewServiceAccountKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sa.CertPEM), "PUBLIC KEY") {
		t.Fatalf("public key PEM: %s", sa.CertPEM)
	}
	if _, err := ParseKey(sa.KeyPEM); err != nil {
		t.Fatal(err)
	}
	kc := Kubeconfig("lab", "192.168.40.200:6443", []byte("ca"), "admin", KeyPair{CertPEM: []byte("c"), KeyPEM: []byte("k")})
	for _, want := range []string{"server: https://192.168.40.200:6443", "certificate-authority-data: Y2E=", "current-context: admin@lab"} {
		if !strings.Contains(kc, want) {
			t.Errorf("kubeconfig lacks %q:\n%s", want, kc)
		}
	}
}
