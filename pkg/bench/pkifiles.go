package bench

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

// certValidity is long enough for any bench.
const certValidity = 24 * time.Hour

// authority issues every certificate of one bench: the controllers', the
// clients' and etcd's.
type authority struct {
	ca     *pki.CA
	encKey []byte
}

func newAuthority(name string) (*authority, error) {
	ca, err := pki.NewCA("kcore bench CA "+name, time.Now(), certValidity)
	if err != nil {
		return nil, fmt.Errorf("create bench ca: %w", err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		return nil, fmt.Errorf("create bench ca: %w", err)
	}
	return &authority{ca: ca, encKey: key}, nil
}

// issue returns a certificate for 127.0.0.1 and localhost.
func (a *authority) issue(cn, role string, usage pki.Usage) (pki.KeyPair, error) {
	req := pki.CertRequest{CommonName: cn, Usage: usage, Validity: certValidity}
	if role != "" {
		req.Organization = []string{role}
	}
	if usage&pki.UsageServer != 0 {
		req.DNSNames = []string{"localhost"}
		req.IPs = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	kp, err := a.ca.Issue(req, time.Now())
	if err != nil {
		return pki.KeyPair{}, fmt.Errorf("issue certificate %s: %w", cn, err)
	}
	return kp, nil
}

// controllerDir writes the PKI dir of controller i, as `kctl controller
// init` does, and returns its path.
func (a *authority) controllerDir(root string, i int) (string, error) {
	kp, err := a.issue(fmt.Sprintf("controller-%d", i), apiv1.RoleController, pki.UsageServer|pki.UsageClient)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, fmt.Sprintf("pki-%d", i))
	files := map[string][]byte{
		controller.FileCACert:        a.ca.CertPEM,
		controller.FileCAKey:         a.ca.KeyPEM,
		controller.FileServerCert:    kp.CertPEM,
		controller.FileServerKey:     kp.KeyPEM,
		controller.FileEncryptionKey: a.encKey,
	}
	if err := writeFiles(dir, files); err != nil {
		return "", fmt.Errorf("write controller pki: %w", err)
	}
	return dir, nil
}

// clientConfig returns a client config for the controllers at addrs with a
// certificate of role and subject cn.
func (a *authority) clientConfig(addrs []string, role, cn string) (client.Config, error) {
	kp, err := a.issue(cn, role, pki.UsageClient)
	if err != nil {
		return client.Config{}, err
	}
	return client.Config{Addresses: addrs, CA: a.ca.CertPEM, Cert: kp.CertPEM, Key: kp.KeyPEM}, nil
}

// newClient returns a client with its own transport (its own connection).
func (a *authority) newClient(addrs []string, role, cn string) (*client.Client, error) {
	cfg, err := a.clientConfig(addrs, role, cn)
	if err != nil {
		return nil, err
	}
	return client.New(cfg)
}

func writeFiles(dir string, files map[string][]byte) error {
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

// adminClient returns a cluster-admin client for addrs.
func (a *authority) adminClient(addrs []string) (*client.Client, error) {
	return a.newClient(addrs, apiv1.RoleClusterAdmin, "bench-admin")
}
