package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

// MinRenewGap is the least time between two renewals, so a controller
// whose clock runs behind cannot make the agent renew in a tight loop.
// When a renewal is due is pki's one policy (pki.RenewAt: two thirds of
// the lifetime, so a 24h certificate is renewed 8h before it expires).
const MinRenewGap = 30 * time.Second

// LogCertExpired is the message the agent logs once when it starts with a
// certificate that expired (the machine was off past its validity): the
// controller lets such a certificate renew itself, and only that, within
// its --node-cert-grace, so heartbeats and reports fail until then.
const LogCertExpired = "the node certificate expired while the agent was not running; renewing it now"

// Renewer is what the agent needs to renew its certificate (pkg/client's
// *Client implements it). A Controller without it is never renewed.
type Renewer interface {
	RenewNodeCert(ctx context.Context, nodeID string) (apiv1.CertResponse, error)
}

// CertSource holds the node's current certificate and hands it to every
// new TLS handshake (tls.Config.GetClientCertificate), so a renewed
// certificate is swapped in without restarting the agent or its client.
type CertSource struct {
	mu   sync.RWMutex
	cert *tls.Certificate
	ca   []byte
}

// NewCertSource parses the credentials' certificate and key.
func NewCertSource(c Credentials) (*CertSource, error) {
	s := &CertSource{}
	if err := s.Swap(c); err != nil {
		return nil, err
	}
	return s, nil
}

// Swap replaces the certificate; the next handshake presents the new one.
func (s *CertSource) Swap(c Credentials) error {
	pair, err := tls.X509KeyPair(c.Cert, c.Key)
	if err != nil {
		return fmt.Errorf("load node certificate: %w", err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return fmt.Errorf("load node certificate: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cert = &pair
	s.ca = append([]byte(nil), c.CA...)
	return nil
}

// GetClientCertificate returns the current certificate (for tls.Config).
func (s *CertSource) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cert, nil
}

// Leaf is the current certificate, parsed.
func (s *CertSource) Leaf() *x509.Certificate {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cert.Leaf
}

// CA is the controller CA that came with the current certificate (PEM).
func (s *CertSource) CA() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ca
}

// renewLoop renews the node certificate each time it is due, persists the
// new credentials atomically and swaps them into certs. A failed renewal
// is retried with capped backoff until it succeeds or ctx ends.
func (a *Agent) renewLoop(ctx context.Context, ctl Controller, certs *CertSource) {
	r, ok := ctl.(Renewer)
	if !ok || certs == nil {
		return
	}
	backoff := a.firstBackoff()
	var last time.Time
	expired := false
	if leaf := certs.Leaf(); time.Now().After(leaf.NotAfter) {
		expired = true
		a.log().Warn(LogCertExpired, "expired", leaf.NotAfter, "serial", leaf.SerialNumber.Text(16))
	}
	for {
		due := pki.RenewAt(certs.Leaf())
		if !last.IsZero() && due.Before(last.Add(MinRenewGap)) {
			due = last.Add(MinRenewGap)
		}
		if !sleep(ctx, time.Until(due)) {
			return
		}
		err := a.renewOnce(ctx, r, certs)
		if err == nil {
			backoff, last = a.firstBackoff(), time.Now()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if expired {
			// Said once: a certificate past the grace, revoked or
			// replaced by a re-key is refused for good.
			expired = false
			a.log().Error("renewing the expired node certificate failed: if the controller refuses it (expired longer ago than its --node-cert-grace, revoked, or the node was re-keyed), give the agent a re-key token (kctl node token create --node ID --rekey)", "err", err)
		}
		a.log().Warn("renew node certificate failed; retrying", "err", err, "in", backoff, "expires", certs.Leaf().NotAfter)
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, orDefault(a.BackoffMax, 30*time.Second))
	}
}

// renewOnce gets a fresh certificate, stores it and swaps it in.
func (a *Agent) renewOnce(ctx context.Context, r Renewer, certs *CertSource) error {
	res, err := r.RenewNodeCert(ctx, a.NodeID)
	if err != nil {
		return err
	}
	c := Credentials{Cert: []byte(res.Cert), Key: []byte(res.Key), CA: []byte(res.CA)}
	if len(c.CA) == 0 {
		c.CA = certs.CA()
	}
	next, err := NewCertSource(c)
	if err != nil {
		return err
	}
	if next.Leaf().Subject.CommonName != a.NodeID {
		return errors.New("renew node certificate: the controller answered a certificate for another node")
	}
	if err := StoreCredentials(a.Root, c); err != nil {
		return err
	}
	if err := certs.Swap(c); err != nil {
		return err
	}
	if ic, ok := r.(interface{ CloseIdleConnections() }); ok {
		ic.CloseIdleConnections()
	}
	a.log().Info("renewed node certificate", "serial", next.Leaf().SerialNumber.Text(16), "expires", next.Leaf().NotAfter)
	return nil
}
