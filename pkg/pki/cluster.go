package pki

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Validity periods of the certificates a cluster is issued. Leaves follow
// the Lifetime policy (lifetime.go); ClusterLeafValidity is its default.
const (
	ClusterCAValidity   = 10 * 365 * 24 * time.Hour
	ClusterLeafValidity = DefaultLeafValidity
	// RenewBefore is how long before expiry a CA starts rotating to the
	// next generation by itself (EnsureFor), through the same dual-trust
	// phases as a raised spec.caGeneration. Only a CA that already expired,
	// or cannot be read, is replaced outright.
	RenewBefore = 30 * 24 * time.Hour
)

// Well-known identities of a cluster's client certificates.
const (
	AdminCommonName             = "kcore-admin"
	MastersGroup                = "system:masters"
	NodesGroup                  = "system:nodes"
	ControllerManagerCommonName = "system:kube-controller-manager"
	SchedulerCommonName         = "system:kube-scheduler"
	KubeProxyCommonName         = "system:kube-proxy"
	APIServerKubeletCommonName  = "kube-apiserver-kubelet-client"
	APIServerEtcdCommonName     = "kube-apiserver-etcd-client"
	FrontProxyClientCommonName  = "front-proxy-client"
)

// ErrNoAdmin is returned when no control plane has an admin certificate yet.
var ErrNoAdmin = errors.New("no admin certificate")

// ErrBadCluster is returned when a cluster's addresses or CIDRs cannot be parsed.
var ErrBadCluster = errors.New("invalid cluster for certificates")

// ClusterSecrets is every key and certificate of one Kubernetes cluster. It is
// plain data (PEM) so the controller can store it encrypted and the renderer
// can write it to files; Ensure keeps it in step with the cluster spec.
type ClusterSecrets struct {
	// CA signs the API server, kubelet and component certificates.
	CA KeyPair `json:"ca"`
	// EtcdCA signs etcd's server, peer and client certificates.
	EtcdCA KeyPair `json:"etcdCa"`
	// FrontProxyCA signs the aggregation-layer client certificate.
	FrontProxyCA KeyPair `json:"frontProxyCa"`
	// FrontProxyClient is the API server's aggregation-layer client certificate.
	FrontProxyClient KeyPair `json:"frontProxyClient"`
	// ServiceAccount signs service-account tokens (CertPEM holds the public key).
	ServiceAccount KeyPair `json:"serviceAccount"`
	// ControlPlanes holds each control-plane node's certificates, by node id.
	ControlPlanes map[string]*ControlPlaneSecrets `json:"controlPlanes,omitempty"`
	// Nodes holds every member's kubelet certificates, by node id.
	Nodes map[string]*NodeSecrets `json:"nodes,omitempty"`
	// CAGeneration is the generation of CA, EtcdCA and FrontProxyCA
	// (spec.caGeneration once a rotation to it reached its reissue phase).
	CAGeneration int `json:"caGeneration,omitempty"`
	// Rotation is the CA rotation in progress, nil when none is.
	Rotation *CARotationSecrets `json:"caRotation,omitempty"`
}

// ControlPlaneSecrets are the certificates of one control-plane node.
type ControlPlaneSecrets struct {
	// EtcdServer serves etcd clients (SANs: address, 127.0.0.1, localhost, node id).
	EtcdServer KeyPair `json:"etcdServer"`
	// EtcdPeer authenticates etcd members to each other.
	EtcdPeer KeyPair `json:"etcdPeer"`
	// APIServer is kube-apiserver's serving certificate.
	APIServer KeyPair `json:"apiServer"`
	// APIServerKubeletClient is kube-apiserver's client certificate towards kubelets.
	APIServerKubeletClient KeyPair `json:"apiServerKubeletClient"`
	// APIServerEtcdClient is kube-apiserver's client certificate towards etcd.
	APIServerEtcdClient KeyPair `json:"apiServerEtcdClient"`
	// ControllerManager is kube-controller-manager's client certificate.
	ControllerManager KeyPair `json:"controllerManager"`
	// Scheduler is kube-scheduler's client certificate.
	Scheduler KeyPair `json:"scheduler"`
	// Admin is the cluster-admin client certificate of /etc/kubernetes/admin.conf.
	Admin KeyPair `json:"admin"`
}

// NodeSecrets are the certificates of one member (control plane or worker).
type NodeSecrets struct {
	// KubeletClient is kubelet's client certificate (system:node:<id>, system:nodes).
	KubeletClient KeyPair `json:"kubeletClient"`
	// KubeletServing is kubelet's serving certificate (SANs: node id, address).
	KubeletServing KeyPair `json:"kubeletServing"`
	// KubeProxy is kube-proxy's client certificate; only in bridge mode.
	KubeProxy KeyPair `json:"kubeProxy,omitzero"`
}

// AdminKubeconfig is a cluster-admin kubeconfig for c (server = the API
// endpoint), with the admin certificate of the first control plane that has
// one, for the controller's own use (health checks, kubectl).
func (s *ClusterSecrets) AdminKubeconfig(c *api.KubernetesCluster) (string, error) {
	for _, n := range c.Spec.ControlPlaneNodes {
		if cp := s.ControlPlanes[n.NodeID]; cp != nil && len(cp.Admin.CertPEM) > 0 {
			return Kubeconfig(c.Metadata.Name, c.Spec.APIServerEndpoint, s.ClusterTrust(), AdminCommonName, cp.Admin), nil
		}
	}
	return "", fmt.Errorf("admin kubeconfig for %s: %w", c.Metadata.Name, ErrNoAdmin)
}

// IssueClusterSecrets issues every CA, key and certificate of c.
func IssueClusterSecrets(c *api.KubernetesCluster, now time.Time) (*ClusterSecrets, error) {
	s := &ClusterSecrets{}
	if _, err := s.Ensure(c, now); err != nil {
		return nil, err
	}
	return s, nil
}

// Ensure is EnsureFor with the default lifetime.
func (s *ClusterSecrets) Ensure(c *api.KubernetesCluster, now time.Time) ([]string, error) {
	return s.EnsureFor(c, now, Lifetime{})
}

// EnsureFor issues whatever c needs that s lacks, is due for renewal under
// lt (two thirds of its life, expired ones included), was signed by a CA
// that is no longer s's, or no longer matches its request (names, SANs: a
// VIP change reissues only the API server certificates). It drops the
// certificates of nodes that left the cluster. New secrets get CAs of
// spec.caGeneration; stored ones whose generation spec.caGeneration passed
// start a CA rotation to it (its trust phase) unless one runs, and so do
// stored ones with a CA within RenewBefore of its expiry (to the next
// generation). It returns
// the names of what it issued or removed, sorted, e.g.
// "controlPlanes/node-105/apiServer".
func (s *ClusterSecrets) EnsureFor(c *api.KubernetesCluster, now time.Time, lt Lifetime) ([]string, error) {
	if err := lt.Validate(); err != nil {
		return nil, err
	}
	e := &ensurer{now: now, lifetime: lt}
	switch {
	case len(s.CA.CertPEM) == 0:
		s.CAGeneration = c.Spec.CAGeneration
	case s.Rotation == nil && c.Spec.CAGeneration > s.CAGeneration:
		if err := e.startRotation(s, c.Spec.CAGeneration); err != nil {
			return nil, err
		}
	case s.Rotation == nil && s.caDue(now):
		if err := e.startRotation(s, s.CAGeneration+1); err != nil {
			return nil, err
		}
	}
	cas, err := e.cas(s)
	if err != nil {
		return nil, err
	}
	reqs, err := leafRequests(c)
	if err != nil {
		return nil, err
	}
	if s.ControlPlanes == nil {
		s.ControlPlanes = map[string]*ControlPlaneSecrets{}
	}
	if s.Nodes == nil {
		s.Nodes = map[string]*NodeSecrets{}
	}
	cps := map[string]bool{}
	for _, n := range c.Spec.ControlPlaneNodes {
		cps[n.NodeID] = true
		if s.ControlPlanes[n.NodeID] == nil {
			s.ControlPlanes[n.NodeID] = &ControlPlaneSecrets{}
		}
	}
	members := map[string]bool{}
	for _, n := range c.Spec.Members() {
		members[n.NodeID] = true
		if s.Nodes[n.NodeID] == nil {
			s.Nodes[n.NodeID] = &NodeSecrets{}
		}
	}
	for id := range s.ControlPlanes {
		if !cps[id] {
			delete(s.ControlPlanes, id)
			e.changed = append(e.changed, "controlPlanes/"+id)
		}
	}
	for id := range s.Nodes {
		if !members[id] {
			delete(s.Nodes, id)
			e.changed = append(e.changed, "nodes/"+id)
		}
	}
	for _, r := range reqs {
		kp := r.slot(s)
		if r.remove {
			if len(kp.CertPEM) > 0 {
				*kp = KeyPair{}
				e.changed = append(e.changed, r.name)
			}
			continue
		}
		if err := e.ensureLeaf(kp, cas[r.ca], r); err != nil {
			return nil, err
		}
	}
	sort.Strings(e.changed)
	return e.changed, nil
}

type caKind int

const (
	caCluster caKind = iota
	caEtcd
	caFrontProxy
)

// leafRequest is one leaf certificate a cluster needs, and where it lives.
type leafRequest struct {
	name   string
	ca     caKind
	req    CertRequest
	slot   func(*ClusterSecrets) *KeyPair
	remove bool
}

type ensurer struct {
	now      time.Time
	lifetime Lifetime
	changed  []string
}

func (e *ensurer) cas(s *ClusterSecrets) (map[caKind]*CA, error) {
	type caSlot struct {
		name string
		kind caKind
		cn   string
		kp   *KeyPair
	}
	out := map[caKind]*CA{}
	for _, c := range []caSlot{
		{"ca", caCluster, caName(caCluster), &s.CA},
		{"etcdCa", caEtcd, caName(caEtcd), &s.EtcdCA},
		{"frontProxyCa", caFrontProxy, caName(caFrontProxy), &s.FrontProxyCA},
	} {
		if len(c.kp.CertPEM) > 0 {
			// A CA due for renewal rotates (caDue); one past its
			// expiry has nothing left to keep trusted.
			ca, err := LoadCA(*c.kp)
			if err == nil && ca.Cert().NotAfter.After(e.now) {
				out[c.kind] = ca
				continue
			}
		}
		ca, err := NewCA(c.cn, e.now, ClusterCAValidity)
		if err != nil {
			return nil, fmt.Errorf("issue %s: %w", c.name, err)
		}
		*c.kp = ca.KeyPair
		out[c.kind] = ca
		e.changed = append(e.changed, c.name)
	}
	if len(s.ServiceAccount.KeyPEM) == 0 {
		sa, err := NewServiceAccountKey()
		if err != nil {
			return nil, err
		}
		s.ServiceAccount = sa
		e.changed = append(e.changed, "serviceAccount")
	}
	return out, nil
}

func (e *ensurer) ensureLeaf(kp *KeyPair, ca *CA, r leafRequest) error {
	if leafCurrent(*kp, ca, r.req, e.now, e.lifetime) {
		return nil
	}
	req := r.req
	req.Validity = e.lifetime.LeafValidity()
	issued, err := ca.Issue(req, e.now)
	if err != nil {
		return fmt.Errorf("issue %s: %w", r.name, err)
	}
	*kp = issued
	e.changed = append(e.changed, r.name)
	return nil
}

// leafCurrent reports whether kp is a certificate from ca that matches req
// and is not yet due for renewal under lt.
func leafCurrent(kp KeyPair, ca *CA, req CertRequest, now time.Time, lt Lifetime) bool {
	if len(kp.CertPEM) == 0 || len(kp.KeyPEM) == 0 {
		return false
	}
	cert, err := ParseCert(kp.CertPEM)
	if err != nil {
		return false
	}
	if cert.CheckSignatureFrom(ca.Cert()) != nil || lt.Due(cert, now) {
		return false
	}
	if cert.Subject.CommonName != req.CommonName || !sameSet(cert.Subject.Organization, req.Organization) {
		return false
	}
	if !sameSet(cert.DNSNames, req.DNSNames) {
		return false
	}
	have := make([]string, 0, len(cert.IPAddresses))
	for _, ip := range cert.IPAddresses {
		have = append(have, ip.String())
	}
	want := make([]string, 0, len(req.IPs))
	for _, ip := range req.IPs {
		want = append(want, ip.String())
	}
	return sameSet(have, want)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// parseIPs parses addresses, wrapping ErrBadCluster on failure.
func parseIPs(addrs ...string) ([]net.IP, error) {
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		ip := net.ParseIP(a)
		if ip == nil {
			return nil, fmt.Errorf("parse address %q: %w", a, ErrBadCluster)
		}
		out = append(out, ip)
	}
	return out, nil
}

// present reports whether s holds the map entry r's slot lives in (a node
// whose certificates were not issued yet has none).
func (r leafRequest) present(s *ClusterSecrets) bool {
	parts := strings.SplitN(r.name, "/", 3)
	if len(parts) < 3 {
		return true
	}
	switch parts[0] {
	case "controlPlanes":
		return s.ControlPlanes[parts[1]] != nil
	case "nodes":
		return s.Nodes[parts[1]] != nil
	}
	return true
}
