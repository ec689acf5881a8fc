package controller

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/pki"
)

// DefaultCertCheckInterval is how often a replica looks at its own
// certificate files for a change and for renewal (Config.CertCheckInterval)
// when its leaves live long; CertCheckIntervalFor shortens it for short ones.
const DefaultCertCheckInterval = time.Minute

// CertChecksPerLifetime is how many times at least a replica looks at its
// own certificate during one leaf lifetime: due at two thirds (16/24 of
// it), it is renewed by 17/24, well before the last quarter in which the
// cluster's Certificates condition warns.
const CertChecksPerLifetime = 24

// CertCheckIntervalFor is the default Config.CertCheckInterval under lt:
// DefaultCertCheckInterval, or the leaf lifetime over CertChecksPerLifetime
// when that is shorter (7.5 s for three-minute leaves), so a
// short-lived certificate cannot run out between two looks.
func CertCheckIntervalFor(lt pki.Lifetime) time.Duration {
	return min(DefaultCertCheckInterval, lt.LeafValidity()/CertChecksPerLifetime)
}

// ownCert is a replica's own certificate, server.crt and server.key in the
// PKI directory. Every TLS handshake of the API listener, the raft
// transport and the forwarding client takes it from here, so a new pair
// (renewed by the replica at two thirds of its lifetime, or written by an
// operator) is used from the next handshake on, without a restart and
// without touching connections already open.
type ownCert struct {
	dir      string
	ca       *pki.CA
	lifetime pki.Lifetime
	log      *slog.Logger

	mu      sync.RWMutex
	cert    *tls.Certificate
	certPEM []byte
	keyPEM  []byte
}

// newOwnCert starts from the pair loaded at start.
func newOwnCert(dir string, ca *pki.CA, certPEM, keyPEM []byte, lt pki.Lifetime, log *slog.Logger) (*ownCert, error) {
	o := &ownCert{dir: dir, ca: ca, lifetime: lt, log: log}
	if err := o.set(certPEM, keyPEM); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *ownCert) set(certPEM, keyPEM []byte) error {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("load server certificate: %w", err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return fmt.Errorf("load server certificate: %w", err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.cert, o.certPEM, o.keyPEM = &pair, certPEM, keyPEM
	return nil
}

// GetCertificate hands the current certificate to a server handshake.
func (o *ownCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.cert, nil
}

// GetClientCertificate hands the current certificate to a client handshake.
func (o *ownCert) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.cert, nil
}

// Leaf is the current certificate, parsed.
func (o *ownCert) Leaf() *x509.Certificate {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.cert.Leaf
}

// serverTLS makes cfg's handshakes take the current certificate.
func (o *ownCert) serverTLS(cfg *tls.Config) *tls.Config {
	cfg.Certificates = nil
	cfg.GetCertificate = o.GetCertificate
	return cfg
}

// clientTLS makes cfg's handshakes present the current certificate.
func (o *ownCert) clientTLS(cfg *tls.Config) *tls.Config {
	cfg.Certificates = nil
	cfg.GetClientCertificate = o.GetClientCertificate
	return cfg
}

// reload takes the files' pair when it differs from the current one. A
// pair that does not match (read between the two renames of a writer) is
// left for the next check; the current certificate stays.
func (o *ownCert) reload() (bool, error) {
	certPEM, err := os.ReadFile(filepath.Join(o.dir, FileServerCert))
	if err != nil {
		return false, fmt.Errorf("reload server certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(o.dir, FileServerKey))
	if err != nil {
		return false, fmt.Errorf("reload server certificate: %w", err)
	}
	o.mu.RLock()
	same := bytes.Equal(certPEM, o.certPEM) && bytes.Equal(keyPEM, o.keyPEM)
	o.mu.RUnlock()
	if same {
		return false, nil
	}
	if err := o.set(certPEM, keyPEM); err != nil {
		return false, err
	}
	return true, nil
}

// renewIfDue reissues the certificate from the CA when it is due at now
// (pki's lifetime policy), with the same subject and SANs, and writes it:
// the key first, then the certificate, each replaced atomically, so a
// reader never takes a new certificate with the old key for long.
func (o *ownCert) renewIfDue(now time.Time) (bool, error) {
	leaf := o.Leaf()
	if !o.lifetime.Due(leaf, now) {
		return false, nil
	}
	kp, err := o.ca.Issue(pki.RenewalRequest(leaf, o.lifetime.LeafValidity()), now)
	if err != nil {
		return false, fmt.Errorf("renew server certificate: %w", err)
	}
	if err := writeAtomic(filepath.Join(o.dir, FileServerKey), kp.KeyPEM, 0o600); err != nil {
		return false, fmt.Errorf("renew server certificate: %w", err)
	}
	if err := writeAtomic(filepath.Join(o.dir, FileServerCert), kp.CertPEM, 0o644); err != nil {
		return false, fmt.Errorf("renew server certificate: %w", err)
	}
	if err := o.set(kp.CertPEM, kp.KeyPEM); err != nil {
		return false, err
	}
	return true, nil
}

// check reloads changed files, then renews when due; it logs what it did.
func (o *ownCert) check(now time.Time) {
	if changed, err := o.reload(); err != nil {
		o.log.Warn("reload own certificate", "err", err)
	} else if changed {
		o.log.Info("own certificate reloaded from its files", "serial", o.Leaf().SerialNumber.Text(16), "expires", o.Leaf().NotAfter)
	}
	if renewed, err := o.renewIfDue(now); err != nil {
		o.log.Warn("renew own certificate", "err", err, "expires", o.Leaf().NotAfter)
	} else if renewed {
		o.log.Info("own certificate renewed", "serial", o.Leaf().SerialNumber.Text(16), "expires", o.Leaf().NotAfter)
	}
}

// run checks every interval until stop closes.
func (o *ownCert) run(stop <-chan struct{}, interval time.Duration, now func() time.Time) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		o.check(now())
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// writeAtomic replaces path with data (mode) through a temporary file in
// the same directory and a rename.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
