package ctlproc

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
)

// CertValidity is how long every certificate an Authority issues is valid:
// long enough for any benchmark or test run.
const CertValidity = 24 * time.Hour

// Authority issues every certificate of one run (the controllers', the
// clients', and any other server's) from one CA, and holds the secrets
// encryption key every replica shares.
type Authority struct {
	ca     *pki.CA
	encKey []byte
}

// NewAuthority creates a CA named after name and a secrets key.
func NewAuthority(name string) (*Authority, error) {
	ca, err := pki.NewCA("kcore CA "+name, time.Now(), CertValidity)
	if err != nil {
		return nil, fmt.Errorf("create ca: %w", err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		return nil, fmt.Errorf("create ca: %w", err)
	}
	return &Authority{ca: ca, encKey: key}, nil
}

// CA returns the authority's CA.
func (a *Authority) CA() *pki.CA { return a.ca }

// Issue returns a certificate with subject cn and, when role is set, that
// role as its organization; server certificates name 127.0.0.1,
// localhost and ips.
func (a *Authority) Issue(cn, role string, usage pki.Usage, ips ...net.IP) (pki.KeyPair, error) {
	req := pki.CertRequest{CommonName: cn, Usage: usage, Validity: CertValidity}
	if role != "" {
		req.Organization = []string{role}
	}
	if usage&pki.UsageServer != 0 {
		req.DNSNames = []string{"localhost"}
		req.IPs = append([]net.IP{net.IPv4(127, 0, 0, 1)}, ips...)
	}
	kp, err := a.ca.Issue(req, time.Now())
	if err != nil {
		return pki.KeyPair{}, fmt.Errorf("issue certificate %s: %w", cn, err)
	}
	return kp, nil
}

// ControllerDir writes the PKI dir of the controller named cn into dir, as
// `kctl controller init` does; its server certificate names loopback and
// ips (the addresses it listens on outside loopback, e.g. in a network
// namespace).
func (a *Authority) ControllerDir(dir, cn string, ips ...net.IP) error {
	kp, err := a.Issue(cn, apiv1.RoleController, pki.UsageServer|pki.UsageClient, ips...)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		controller.FileCACert:        a.ca.CertPEM,
		controller.FileCAKey:         a.ca.KeyPEM,
		controller.FileServerCert:    kp.CertPEM,
		controller.FileServerKey:     kp.KeyPEM,
		controller.FileEncryptionKey: a.encKey,
	}
	if err := WriteFiles(dir, files); err != nil {
		return fmt.Errorf("write controller pki: %w", err)
	}
	return nil
}

// ClientConfig returns a client config for the controllers at addrs with a
// certificate of role and subject cn.
func (a *Authority) ClientConfig(addrs []string, role, cn string) (client.Config, error) {
	kp, err := a.Issue(cn, role, pki.UsageClient)
	if err != nil {
		return client.Config{}, err
	}
	return client.Config{Addresses: addrs, CA: a.ca.CertPEM, Cert: kp.CertPEM, Key: kp.KeyPEM}, nil
}

// NewClient returns a client with its own transport (its own connection).
func (a *Authority) NewClient(addrs []string, role, cn string) (*client.Client, error) {
	cfg, err := a.ClientConfig(addrs, role, cn)
	if err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// WriteFiles creates dir (mode 0700) and writes each file into it (0600).
func WriteFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
