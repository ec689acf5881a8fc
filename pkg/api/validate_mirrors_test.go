package api

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

// testCAPEM is a freshly made self-signed CA certificate in PEM.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mirror CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).Add(100 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestRegistryMirrorsValidate(t *testing.T) {
	ca := testCAPEM(t)
	mirror := func(reg string, eps ...string) RegistryMirror { return RegistryMirror{Registry: reg, Endpoints: eps} }
	mirrors := func(n int) []RegistryMirror {
		out := make([]RegistryMirror, n)
		for i := range out {
			out[i] = mirror(fmt.Sprintf("r%d.example", i), "https://10.77.0.1:5000")
		}
		return out
	}
	endpoints := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("https://10.77.0.%d:5000", i+1)
		}
		return out
	}
	longHost := "https://" + strings.Repeat("a", MaxMirrorEndpointLen-len("https://"))
	// A CA bundle exactly at the bound: the certificate, padded with blank lines.
	atBound := ca + strings.Repeat("\n", MaxMirrorCAPEMBytes-len(ca))
	tests := []struct {
		name      string
		mirrors   []RegistryMirror
		want      []string
		fragments []string
	}{
		{"valid", []RegistryMirror{
			{Registry: "registry.k8s.io", Endpoints: []string{"https://10.77.0.1:5000", "https://mirror.example/"}, CAPEM: ca},
			mirror("docker.io", "https://10.77.0.1:5001"),
			mirror("10.77.0.1:5000", "https://10.77.0.1:5000"),
		}, nil, nil},
		{"plain http warns", []RegistryMirror{mirror("registry.k8s.io", "http://10.77.0.1:5000")},
			[]string{"warning spec.registryMirrors[0].endpoints[0]"}, []string{"plain http"}},
		{"registry required", []RegistryMirror{mirror("", "https://m")}, []string{"error spec.registryMirrors[0].registry"}, []string{"required"}},
		{"registry with a scheme", []RegistryMirror{mirror("https://registry.k8s.io", "https://m")},
			[]string{"error spec.registryMirrors[0].registry"}, []string{"not a registry host"}},
		{"registry escaping certs.d", []RegistryMirror{mirror("../../etc", "https://m"), mirror("a/b", "https://m"), mirror("..", "https://m")},
			[]string{"error spec.registryMirrors[0].registry", "error spec.registryMirrors[1].registry", "error spec.registryMirrors[2].registry"}, nil},
		{"registry in upper case", []RegistryMirror{mirror("Registry.k8s.io", "https://m")}, []string{"error spec.registryMirrors[0].registry"}, nil},
		{"registry port out of range", []RegistryMirror{mirror("r.example:70000", "https://m")}, []string{"error spec.registryMirrors[0].registry"}, nil},
		{"duplicate registry", []RegistryMirror{mirror("docker.io", "https://a"), mirror("docker.io", "https://b")},
			[]string{"error spec.registryMirrors[1].registry"}, []string{`duplicate registry "docker.io" (also spec.registryMirrors[0])`}},
		{"no endpoints", []RegistryMirror{mirror("docker.io")}, []string{"error spec.registryMirrors[0].endpoints"}, []string{"at least one"}},
		{"endpoint not a URL", []RegistryMirror{mirror("docker.io", "10.77.0.1:5000", "ftp://m", "https://user:pw@m", "https://m/v2/x", "https://m?q=1", `https://m"x`)},
			[]string{
				"error spec.registryMirrors[0].endpoints[0]", "error spec.registryMirrors[0].endpoints[1]", "error spec.registryMirrors[0].endpoints[2]",
				"error spec.registryMirrors[0].endpoints[3]", "error spec.registryMirrors[0].endpoints[4]", "error spec.registryMirrors[0].endpoints[5]",
			}, slices.Repeat([]string{"not a mirror URL"}, 6)},
		{"duplicate endpoint", []RegistryMirror{mirror("docker.io", "https://m:5000", "https://m:5000/")},
			[]string{"error spec.registryMirrors[0].endpoints[1]"}, []string{"duplicate endpoint"}},
		{"ca not PEM", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: "not a certificate"}},
			[]string{"error spec.registryMirrors[0].caPem"}, []string{"no PEM CERTIFICATE"}},
		{"ca is a key", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}},
			[]string{"error spec.registryMirrors[0].caPem"}, []string{`"PRIVATE KEY" PEM block`}},
		{"ca does not parse", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}},
			[]string{"error spec.registryMirrors[0].caPem"}, []string{"does not parse"}},
		{"ca with trailing text", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: ca + "junk"}},
			[]string{"error spec.registryMirrors[0].caPem"}, []string{"not PEM"}},
		{"ca at the bound", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: atBound}}, nil, nil},
		{"ca over the bound", []RegistryMirror{{Registry: "docker.io", Endpoints: []string{"https://m"}, CAPEM: atBound + "\n"}},
			[]string{"error spec.registryMirrors[0].caPem"}, []string{fmt.Sprintf("%d bytes; at most %d", MaxMirrorCAPEMBytes+1, MaxMirrorCAPEMBytes)}},
		{"registries at the bound", mirrors(MaxRegistryMirrors), nil, nil},
		{"registries over the bound", mirrors(MaxRegistryMirrors + 1),
			[]string{"error spec.registryMirrors"}, []string{fmt.Sprintf("%d registries; at most %d", MaxRegistryMirrors+1, MaxRegistryMirrors)}},
		{"endpoints at the bound", []RegistryMirror{mirror("docker.io", endpoints(MaxMirrorEndpoints)...)}, nil, nil},
		{"endpoints over the bound", []RegistryMirror{mirror("docker.io", endpoints(MaxMirrorEndpoints+1)...)},
			[]string{"error spec.registryMirrors[0].endpoints"}, []string{fmt.Sprintf("%d endpoints; at most %d", MaxMirrorEndpoints+1, MaxMirrorEndpoints)}},
		{"endpoint at the length bound", []RegistryMirror{mirror("docker.io", longHost)}, nil, nil},
		{"endpoint over the length bound", []RegistryMirror{mirror("docker.io", longHost+"a")},
			[]string{"error spec.registryMirrors[0].endpoints[0]"}, []string{fmt.Sprintf("%d bytes; at most %d", MaxMirrorEndpointLen+1, MaxMirrorEndpointLen)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			c.Spec.RegistryMirrors = tt.mirrors
			c.Default()
			checkIssues(t, c.Validate(), tt.want, tt.fragments)
		})
	}
}
