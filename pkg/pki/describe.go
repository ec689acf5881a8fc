package pki

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// IssuedCert describes one leaf certificate Ensure keeps for a cluster:
// who it names and which SANs it holds, without any key material.
type IssuedCert struct {
	// Name is where Ensure keeps it, e.g. controlPlanes/node-105/apiServer.
	Name string
	// Issuer is the signing CA: kubernetes, etcd-ca or front-proxy-ca.
	Issuer string
	// CommonName and Organization are the subject.
	CommonName   string
	Organization []string
	// IPs and DNSNames are the SANs, in request order.
	IPs      []string
	DNSNames []string
}

// Subject renders the subject, e.g. "CN=system:node:node-103, O=system:nodes".
func (c IssuedCert) Subject() string {
	s := "CN=" + c.CommonName
	for _, o := range c.Organization {
		s += ", O=" + o
	}
	return s
}

// SANs renders the SANs, IPs first, e.g. "192.168.40.105, 127.0.0.1, kubernetes".
func (c IssuedCert) SANs() string {
	return strings.Join(append(slices.Clone(c.IPs), c.DNSNames...), ", ")
}

// Describe lists the leaf certificates Ensure issues for c, in a stable
// order: what a plan shows before anything is issued.
func Describe(c *api.KubernetesCluster) ([]IssuedCert, error) {
	reqs, err := leafRequests(c)
	if err != nil {
		return nil, err
	}
	out := make([]IssuedCert, 0, len(reqs))
	for _, r := range reqs {
		if r.remove {
			continue
		}
		out = append(out, describe(r))
	}
	return out, nil
}

func describe(r leafRequest) IssuedCert {
	ic := IssuedCert{Name: r.name, Issuer: caName(r.ca), CommonName: r.req.CommonName,
		Organization: slices.Clone(r.req.Organization), DNSNames: slices.Clone(r.req.DNSNames)}
	for _, ip := range r.req.IPs {
		ic.IPs = append(ic.IPs, ip.String())
	}
	return ic
}

// caName is the common name of a cluster CA.
func caName(k caKind) string {
	switch k {
	case caEtcd:
		return "etcd-ca"
	case caFrontProxy:
		return "front-proxy-ca"
	}
	return "kubernetes"
}

// placeholderMarker starts every placeholder PEM: it is not PEM, so nothing
// can mistake it for a key or certificate.
const placeholderMarker = "# kcore plan placeholder: "

// Placeholder returns the secrets Ensure would issue for c as descriptions
// instead of keys and certificates: every certificate slot holds its
// subject, issuer and SANs as text and every key slot a note, so rendering
// with it is deterministic, changes a certificate file exactly when Ensure
// would reissue it for a changed request, and carries no key material.
// The CAs are those of c.CAStateAfterApply: during a CA rotation both
// generations are trusted and the leaves name their issuer's generation.
// It is for plans only; agents never receive it.
func Placeholder(c *api.KubernetesCluster) (*ClusterSecrets, error) {
	reqs, err := leafRequests(c)
	if err != nil {
		return nil, err
	}
	s := &ClusterSecrets{ControlPlanes: map[string]*ControlPlaneSecrets{}, Nodes: map[string]*NodeSecrets{}}
	for _, n := range c.Spec.ControlPlaneNodes {
		s.ControlPlanes[n.NodeID] = &ControlPlaneSecrets{}
	}
	for _, n := range c.Spec.Members() {
		s.Nodes[n.NodeID] = &NodeSecrets{}
	}
	// The CA state a render sees once c is applied (c.Status is the
	// stored status, or a new cluster's with its spec's generation).
	st := c.CAStateAfterApply(true)
	s.CAGeneration = st.Generation
	ca := func(name, cn string, gen int) KeyPair {
		return KeyPair{
			CertPEM: []byte(placeholderMarker + name + " certificate, CN=" + cn + generationNote(gen, ", generation %d") + ", self-signed\n"),
			KeyPEM:  []byte(placeholderMarker + name + " private key" + generationNote(gen, " of generation %d") + ", generated when the cluster is created\n"),
		}
	}
	s.CA = ca("ca", caName(caCluster), st.Generation)
	s.EtcdCA = ca("etcdCa", caName(caEtcd), st.Generation)
	s.FrontProxyCA = ca("frontProxyCa", caName(caFrontProxy), st.Generation)
	if r := st.Rotation; r != nil {
		other := r.To
		if r.Phase == api.CARotationReissue {
			other = r.From
		}
		s.Rotation = &CARotationSecrets{CARotation: *r,
			CA:           ca("ca", caName(caCluster), other),
			EtcdCA:       ca("etcdCa", caName(caEtcd), other),
			FrontProxyCA: ca("frontProxyCa", caName(caFrontProxy), other),
		}
	}
	s.ServiceAccount = KeyPair{
		CertPEM: []byte(placeholderMarker + "serviceAccount public key\n"),
		KeyPEM:  []byte(placeholderMarker + "serviceAccount private key, generated when the cluster is created\n"),
	}
	for _, r := range reqs {
		if r.remove {
			continue
		}
		d := describe(r)
		cert := fmt.Sprintf("%s%s certificate\nissuer: CN=%s%s\nsubject: %s\nsans: %s\n", placeholderMarker, d.Name, d.Issuer, generationNote(st.Generation, " (generation %d)"), d.Subject(), d.SANs())
		// Issue makes a new key with every certificate, so the key's
		// placeholder changes whenever the certificate's does.
		sum := sha256.Sum256([]byte(cert))
		*r.slot(s) = KeyPair{
			CertPEM: []byte(cert),
			KeyPEM:  []byte(fmt.Sprintf("%s%s private key, generated at apply with certificate %x\n", placeholderMarker, d.Name, sum[:8])),
		}
	}
	return s, nil
}

// generationNote formats a CA generation for a placeholder, nothing for
// the first generation (the placeholders of clusters that never rotated).
func generationNote(gen int, format string) string {
	if gen == 0 {
		return ""
	}
	return fmt.Sprintf(format, gen)
}

// IsPlaceholder reports whether data is a Placeholder certificate or key.
func IsPlaceholder(data []byte) bool { return strings.HasPrefix(string(data), placeholderMarker) }

// CertInfo is one stored certificate of a cluster as it is, without its
// key: what `kctl kubernetes certs` lists and health checks.
type CertInfo struct {
	// Name is the slot, e.g. ca or controlPlanes/node-105/apiServer.
	Name      string
	Subject   string
	Issuer    string
	NotBefore time.Time
	NotAfter  time.Time
}

// Inventory lists the certificates s holds for c, parsed from the stored
// PEMs: the CAs, then every leaf slot Ensure keeps, in Ensure's order. A
// slot that is empty or does not parse is left out.
func (s *ClusterSecrets) Inventory(c *api.KubernetesCluster) ([]CertInfo, error) {
	reqs, err := leafRequests(c)
	if err != nil {
		return nil, err
	}
	var out []CertInfo
	add := func(name string, kp *KeyPair) {
		if kp == nil || len(kp.CertPEM) == 0 {
			return
		}
		cert, err := ParseCert(kp.CertPEM)
		if err != nil {
			return
		}
		out = append(out, CertInfo{Name: name, Subject: cert.Subject.String(), Issuer: cert.Issuer.String(), NotBefore: cert.NotBefore.UTC(), NotAfter: cert.NotAfter.UTC()})
	}
	add("ca", &s.CA)
	add("etcdCa", &s.EtcdCA)
	add("frontProxyCa", &s.FrontProxyCA)
	if r := s.Rotation; r != nil {
		add("caRotation/ca", &r.CA)
		add("caRotation/etcdCa", &r.EtcdCA)
		add("caRotation/frontProxyCa", &r.FrontProxyCA)
	}
	for _, r := range reqs {
		if r.remove || !r.present(s) {
			continue
		}
		add(r.name, r.slot(s))
	}
	return out, nil
}
