package pki

import (
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// ErrNoRotation is returned when a CA rotation is advanced that is not running.
var ErrNoRotation = errors.New("no CA rotation in progress")

// CARotationSecrets is a CA rotation in progress with the CAs trusted
// beside the cluster's current ones: the new CAs (with their keys) in the
// trust phase, the old ones (certificates only) in the reissue phase.
type CARotationSecrets struct {
	api.CARotation
	CA           KeyPair `json:"ca"`
	EtcdCA       KeyPair `json:"etcdCa"`
	FrontProxyCA KeyPair `json:"frontProxyCa"`
}

// CAState is the generation of s's CAs and the rotation in progress.
func (s *ClusterSecrets) CAState() api.CAState {
	st := api.CAState{Generation: s.CAGeneration}
	if s.Rotation != nil {
		r := s.Rotation.CARotation
		st.Rotation = &r
	}
	return st
}

// ClusterTrust is the PEM bundle of cluster CA certificates every party
// trusts: the current CA and, during a rotation, the other one, the older
// generation first.
func (s *ClusterSecrets) ClusterTrust() []byte {
	return s.trust(s.CA, func(r *CARotationSecrets) KeyPair { return r.CA })
}

// EtcdTrust is ClusterTrust for the etcd CA.
func (s *ClusterSecrets) EtcdTrust() []byte {
	return s.trust(s.EtcdCA, func(r *CARotationSecrets) KeyPair { return r.EtcdCA })
}

// FrontProxyTrust is ClusterTrust for the front-proxy CA.
func (s *ClusterSecrets) FrontProxyTrust() []byte {
	return s.trust(s.FrontProxyCA, func(r *CARotationSecrets) KeyPair { return r.FrontProxyCA })
}

func (s *ClusterSecrets) trust(cur KeyPair, other func(*CARotationSecrets) KeyPair) []byte {
	r := s.Rotation
	if r == nil || len(other(r).CertPEM) == 0 {
		return cur.CertPEM
	}
	o := other(r).CertPEM
	if r.Phase == api.CARotationTrust {
		// The other CA is the new one.
		return concatPEM(cur.CertPEM, o)
	}
	return concatPEM(o, cur.CertPEM)
}

func concatPEM(a, b []byte) []byte {
	out := append([]byte(nil), a...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, b...)
}

// caDue reports whether one of s's CAs is within RenewBefore of its
// expiry, and not past it, at now.
func (s *ClusterSecrets) caDue(now time.Time) bool {
	for _, kp := range []KeyPair{s.CA, s.EtcdCA, s.FrontProxyCA} {
		c, err := ParseCert(kp.CertPEM)
		if err == nil && c.NotAfter.After(now) && !c.NotAfter.After(now.Add(RenewBefore)) {
			return true
		}
	}
	return false
}

// startRotation begins a rotation to generation to: new cluster, etcd and
// front-proxy CAs, trusted beside the current ones, issuing nothing yet.
func (e *ensurer) startRotation(s *ClusterSecrets, to int) error {
	r := &CARotationSecrets{CARotation: api.CARotation{
		From: s.CAGeneration, To: to, Phase: api.CARotationTrust, Started: e.now.UTC().Format(time.RFC3339),
	}}
	for _, c := range []struct {
		kind caKind
		kp   *KeyPair
	}{{caCluster, &r.CA}, {caEtcd, &r.EtcdCA}, {caFrontProxy, &r.FrontProxyCA}} {
		ca, err := NewCA(caName(c.kind), e.now, ClusterCAValidity)
		if err != nil {
			return fmt.Errorf("start ca rotation: %w", err)
		}
		*c.kp = ca.KeyPair
	}
	s.Rotation = r
	e.changed = append(e.changed, "caRotation")
	return nil
}

// AdvanceCARotation moves the rotation in progress to its next phase, as
// api.CAState.Next does: from trust, the new CAs become the cluster's (the
// next EnsureFor reissues every leaf with them) and the old ones stay
// trusted, without their keys; from reissue, the old CAs are dropped and
// the rotation ends.
func (s *ClusterSecrets) AdvanceCARotation() error {
	r := s.Rotation
	switch {
	case r == nil:
		return ErrNoRotation
	case r.Phase == api.CARotationTrust:
		old := &CARotationSecrets{CARotation: r.CARotation}
		old.Phase = api.CARotationReissue
		s.CA, old.CA = r.CA, KeyPair{CertPEM: s.CA.CertPEM}
		s.EtcdCA, old.EtcdCA = r.EtcdCA, KeyPair{CertPEM: s.EtcdCA.CertPEM}
		s.FrontProxyCA, old.FrontProxyCA = r.FrontProxyCA, KeyPair{CertPEM: s.FrontProxyCA.CertPEM}
		s.CAGeneration = r.To
		s.Rotation = old
	default:
		s.Rotation = nil
	}
	return nil
}
