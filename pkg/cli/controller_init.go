package cli

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/kctlconfig"
	"kcore.dev/kcore/pkg/pki"
)

// Lifetimes of what kctl controller init issues. The replicas' server
// certificates get pki.DefaultLeafValidity: each replica renews its own
// at two thirds of it (--leaf-validity). The admin certificate in the kctl
// config is the operator's and is not renewed by the controller.
const (
	controllerCAValidity   = 10 * 365 * 24 * time.Hour
	controllerCertValidity = 5 * 365 * 24 * time.Hour
)

// Files of one controller's PKI directory, as kcore-controller --pki-dir reads them.
const (
	pkiCACert        = "ca.crt"
	pkiCAKey         = "ca.key"
	pkiServerCert    = "server.crt"
	pkiServerKey     = "server.key"
	pkiEncryptionKey = "encryption.key"
)

// ErrCredentialsExist is returned when kctl would overwrite credentials without --force.
var ErrCredentialsExist = errors.New("credentials already exist")

type controllerInitOptions struct {
	name        string
	controllers []string
	out         string
	force       bool
}

func newControllerInitCmd(s Streams) *cobra.Command {
	var o controllerInitOptions
	cmd := &cobra.Command{
		Use:   "init --name NAME --controller HOST:PORT...",
		Short: "Create the controller CA, certificates and encryption key, and a kctl context",
		Long: `Create everything a new kcore installation needs before its first controller starts:

  - the controller CA;
  - for each --controller address, a directory DIR/controller-<i>/ holding the CA
    (ca.crt, ca.key), that controller's server certificate (server.crt, server.key;
    valid for the address's host, localhost and 127.0.0.1) and the key that
    encrypts secrets at rest (encryption.key, the same in every directory);
  - an admin client certificate (role cluster-admin), stored inline in a new kctl
    context NAME that becomes the current context.

Copy each controller-<i> directory to its machine. It holds the CA key and the
encryption key: keep it secret (files are written 0600, directories 0700).
Existing credentials (a context called NAME, or files in DIR) are never
overwritten without --force.`,
		Example: `  # One controller on this machine:
  kctl controller init --name lab --controller 127.0.0.1:7443

  # Three replicas:
  kctl controller init --name prod --controller 10.0.0.1:7443 --controller 10.0.0.2:7443 --controller 10.0.0.3:7443 --out /secure/kcore-pki`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runControllerInit(cmd, s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "name of the kctl context to create (e.g. lab)")
	f.StringSliceVar(&o.controllers, "controller", nil, "controller API address host:port; repeat (or separate with commas) for each replica")
	f.StringVar(&o.out, "out", "kcore-pki", "directory to write the controllers' certificates and keys to")
	f.BoolVar(&o.force, "force", false, "overwrite an existing context of that name and existing files in --out")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("controller")
	return cmd
}

func runControllerInit(cmd *cobra.Command, s Streams, o controllerInitOptions) error {
	addrs, err := client.NormalizeAddresses(o.controllers)
	if err != nil {
		return fmt.Errorf("controller init: %w", err)
	}
	if len(addrs) != len(o.controllers) {
		return errors.New("controller init: a --controller address is given twice")
	}
	cfg, cfgPath, err := loadCtlConfig(cmd)
	if err != nil {
		return err
	}
	if cfg.Has(o.name) && !o.force {
		return fmt.Errorf("controller init: context %q in %s: %w; pass --force to replace it", o.name, cfgPath, ErrCredentialsExist)
	}
	if err := checkEmptyDir(o.out); err != nil && !o.force {
		return fmt.Errorf("controller init: %w; pass --force to overwrite", err)
	}

	now := time.Now()
	ca, err := pki.NewCA("kcore controller CA "+o.name, now, controllerCAValidity)
	if err != nil {
		return fmt.Errorf("controller init: %w", err)
	}
	encKey := make([]byte, 32)
	if _, err := rand.Read(encKey); err != nil {
		return fmt.Errorf("controller init: generate encryption key: %w", err)
	}
	if err := os.MkdirAll(o.out, 0o700); err != nil {
		return fmt.Errorf("controller init: %w", err)
	}
	var dirs []string
	for i, addr := range addrs {
		dir := filepath.Join(o.out, fmt.Sprintf("controller-%d", i))
		if err := writeControllerPKI(dir, i, addr, ca, encKey, now); err != nil {
			return fmt.Errorf("controller init: %w", err)
		}
		dirs = append(dirs, dir)
	}
	admin, err := ca.Issue(pki.CertRequest{CommonName: "admin", Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: controllerCertValidity}, now)
	if err != nil {
		return fmt.Errorf("controller init: issue admin certificate: %w", err)
	}
	x := kctlconfig.Context{Name: o.name, Role: apiv1.RoleClusterAdmin, User: "admin"}
	for _, a := range addrs {
		x.Controllers = append(x.Controllers, "https://"+a)
	}
	x.SetCredentials(kctlconfig.Credentials{CA: ca.CertPEM, Cert: admin.CertPEM, Key: admin.KeyPEM})
	cfg.Set(x)
	cfg.CurrentContext = o.name
	if err := cfg.Save(cfgPath); err != nil {
		return fmt.Errorf("controller init: %w", err)
	}
	return printControllerInit(s, o.name, cfgPath, addrs, dirs)
}

// checkEmptyDir returns ErrCredentialsExist when dir exists and is not empty.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("directory %s is not empty: %w", dir, ErrCredentialsExist)
	}
	return nil
}

// writeControllerPKI writes controller i's directory: the CA, its server
// certificate and the shared encryption key.
func writeControllerPKI(dir string, i int, addr string, ca *pki.CA, encKey []byte, now time.Time) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	req := pki.CertRequest{
		CommonName:   fmt.Sprintf("controller-%d", i),
		Organization: []string{apiv1.RoleController},
		DNSNames:     []string{"localhost"},
		IPs:          []net.IP{net.IPv4(127, 0, 0, 1)},
		Usage:        pki.UsageServer | pki.UsageClient,
		Validity:     pki.DefaultLeafValidity,
	}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.Equal(req.IPs[0]) {
			req.IPs = append(req.IPs, ip)
		}
	} else if host != "localhost" {
		req.DNSNames = append(req.DNSNames, host)
	}
	server, err := ca.Issue(req, now)
	if err != nil {
		return fmt.Errorf("issue certificate for %s: %w", addr, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
		mode fs.FileMode
	}{
		{pkiCACert, ca.CertPEM, 0o644},
		{pkiCAKey, ca.KeyPEM, 0o600},
		{pkiServerCert, server.CertPEM, 0o644},
		{pkiServerKey, server.KeyPEM, 0o600},
		{pkiEncryptionKey, encKey, 0o600},
	} {
		if err := kctlconfig.WriteFileAtomic(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

func printControllerInit(s Streams, name, cfgPath string, addrs, dirs []string) error {
	w := s.Out
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	p("Created the controller CA and certificates for %d controller(s):\n", len(addrs))
	for i, d := range dirs {
		p("  %s/  (%s %s %s %s %s)  for %s\n", d, pkiCACert, pkiCAKey, pkiServerCert, pkiServerKey, pkiEncryptionKey, addrs[i])
	}
	p("Wrote context %q (user admin, role cluster-admin) to %s and made it current.\n\n", name, cfgPath)
	p("Each directory holds the CA key and the secrets encryption key: copy it to its\ncontroller's machine only. Then start the first controller:\n\n")
	p("  kcore-controller --pki-dir %s --data-dir /var/lib/kcore/controller --listen %s --bootstrap\n\n", dirs[0], addrs[0])
	if len(addrs) > 1 {
		p("and each other one, on its machine, with --join:\n\n")
		for i := 1; i < len(addrs); i++ {
			p("  kcore-controller --pki-dir %s --data-dir /var/lib/kcore/controller --listen %s --join %s\n", dirs[i], addrs[i], addrs[0])
		}
		p("\n")
	}
	p("Then check it answers:\n\n  kctl controller members\n")
	return err
}
