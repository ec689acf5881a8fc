package cli

import (
	"bytes"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

func TestControllerInitWritesPKIAndContext(t *testing.T) {
	e := newKctlEnv(t)
	out := filepath.Join(e.dir, "pki")
	stdout := e.must("controller", "init", "--name", "lab", "--controller", "10.0.0.1:7443,ctl-b.lan:7443", "--controller", "https://[fd00::3]:7443", "--out", out)
	for _, want := range []string{
		"controller-0/", "controller-2/", `context "lab"`,
		"kcore-controller --pki-dir " + filepath.Join(out, "controller-0") + " --data-dir /var/lib/kcore/controller --listen 10.0.0.1:7443 --bootstrap",
		"--listen ctl-b.lan:7443 --join 10.0.0.1:7443",
		"kctl controller members",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}

	modes := map[string]os.FileMode{out: 0o700}
	var encKeys [][]byte
	for i, tc := range []struct {
		host string
		ip   net.IP
	}{{"10.0.0.1", net.ParseIP("10.0.0.1")}, {"ctl-b.lan", nil}, {"fd00::3", net.ParseIP("fd00::3")}} {
		d := filepath.Join(out, "controller-"+string(rune('0'+i)))
		modes[d] = 0o700
		for name, mode := range map[string]os.FileMode{"ca.crt": 0o644, "ca.key": 0o600, "server.crt": 0o644, "server.key": 0o600, "encryption.key": 0o600} {
			modes[filepath.Join(d, name)] = mode
		}
		key, err := os.ReadFile(filepath.Join(d, "encryption.key"))
		if err != nil {
			t.Fatal(err)
		}
		encKeys = append(encKeys, key)
		caPEM, _ := os.ReadFile(filepath.Join(d, "ca.crt"))
		caKey, _ := os.ReadFile(filepath.Join(d, "ca.key"))
		ca, err := pki.LoadCA(pki.KeyPair{CertPEM: caPEM, KeyPEM: caKey})
		if err != nil {
			t.Fatal(err)
		}
		certPEM, _ := os.ReadFile(filepath.Join(d, "server.crt"))
		cert, err := pki.ParseCert(certPEM)
		if err != nil {
			t.Fatal(err)
		}
		if cert.Subject.CommonName != "controller-"+string(rune('0'+i)) || !slices.Equal(cert.Subject.Organization, []string{"controller"}) {
			t.Errorf("%s subject = %v", d, cert.Subject)
		}
		for _, name := range []string{tc.host, "localhost", "127.0.0.1"} {
			if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("%s: server certificate not valid for %s: %v", d, name, err)
			}
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: server certificate not usable as a client: %v", d, err)
		}
	}
	for path, want := range modes {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}
	if len(encKeys[0]) != 32 || !bytes.Equal(encKeys[0], encKeys[1]) || !bytes.Equal(encKeys[0], encKeys[2]) {
		t.Errorf("encryption keys differ or are not 32 bytes: %d bytes", len(encKeys[0]))
	}

	cfg := e.load()
	x, err := cfg.Current()
	if err != nil {
		t.Fatal(err)
	}
	if x.Name != "lab" || x.Role != apiv1.RoleClusterAdmin || !slices.Equal(x.Controllers, []string{"https://10.0.0.1:7443", "https://ctl-b.lan:7443", "https://[fd00::3]:7443"}) {
		t.Fatalf("context = %+v", x)
	}
	creds, err := x.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pki.ParseCert(creds.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if admin.Subject.CommonName != "admin" || !slices.Equal(admin.Subject.Organization, []string{apiv1.RoleClusterAdmin}) {
		t.Fatalf("admin subject = %v", admin.Subject)
	}
	if fi, err := os.Stat(e.config); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, %v", fi.Mode(), err)
	}
}

func TestControllerInitRefusesToOverwrite(t *testing.T) {
	e := newKctlEnv(t)
	out := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", out)
	firstCA, _ := os.ReadFile(filepath.Join(out, "controller-0", "ca.crt"))
	firstCfg, _ := os.ReadFile(e.config)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"same context", []string{"--name", "lab", "--out", filepath.Join(e.dir, "other")}, `context "lab"`},
		{"same directory", []string{"--name", "lab2", "--out", out}, "is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := e.run(append([]string{"controller", "init", "--controller", "127.0.0.1:7443"}, tc.args...)...)
			if !errors.Is(err, ErrCredentialsExist) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("err = %v, want ErrCredentialsExist mentioning %q and --force", err, tc.want)
			}
			ca, _ := os.ReadFile(filepath.Join(out, "controller-0", "ca.crt"))
			cfg, _ := os.ReadFile(e.config)
			if !bytes.Equal(ca, firstCA) || !bytes.Equal(cfg, firstCfg) {
				t.Fatal("a refused init changed existing credentials")
			}
		})
	}

	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", out, "--force")
	ca, _ := os.ReadFile(filepath.Join(out, "controller-0", "ca.crt"))
	if bytes.Equal(ca, firstCA) {
		t.Fatal("--force did not replace the CA")
	}
	if n := len(e.load().Contexts); n != 1 {
		t.Fatalf("--force left %d contexts, want 1", n)
	}
}

func TestControllerInitRefusesBadAddresses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no port", []string{"--controller", "10.0.0.1"}},
		{"http", []string{"--controller", "http://10.0.0.1:7443"}},
		{"twice", []string{"--controller", "10.0.0.1:7443", "--controller", "https://10.0.0.1:7443"}},
		{"missing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newKctlEnv(t)
			if _, _, err := e.run(append([]string{"controller", "init", "--name", "lab", "--out", filepath.Join(e.dir, "pki")}, tc.args...)...); err == nil {
				t.Fatal("init accepted bad addresses")
			}
			if _, err := os.Stat(filepath.Join(e.dir, "pki")); err == nil {
				t.Fatal("a refused init wrote files")
			}
		})
	}
}
