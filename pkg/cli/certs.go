package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kcore.dev/kcore/pkg/pki"
)

// certDialTimeout bounds each handshake `kctl controller certs` makes to
// read the certificate a replica presents.
const certDialTimeout = 10 * time.Second

// certRow is one certificate in `kctl kubernetes certs` and `kctl
// controller certs`.
type certRow struct {
	Name      string `json:"name"`
	Subject   string `json:"subject"`
	Issuer    string `json:"issuer"`
	NotAfter  string `json:"notAfter"`
	Remaining string `json:"remaining"`
	// Expired is true once NotAfter has passed.
	Expired bool `json:"expired"`
}

// newCertRow fills the remaining time at now.
func newCertRow(name, subject, issuer string, notAfter, now time.Time) certRow {
	left := notAfter.Sub(now)
	return certRow{Name: name, Subject: subject, Issuer: issuer, NotAfter: notAfter.UTC().Format(time.RFC3339),
		Remaining: remaining(left), Expired: left <= 0}
}

// remaining renders a duration as days and hours, or minutes and seconds
// under an hour; "expired" when it is not positive.
func remaining(d time.Duration) string {
	switch {
	case d <= 0:
		return "expired"
	case d >= 24*time.Hour:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	case d >= time.Hour:
		return d.Truncate(time.Minute).String()
	}
	return d.Truncate(time.Second).String()
}

func printCerts(s Streams, rows []certRow, output string) error {
	done, err := printStructured(s, rows, output)
	if done || err != nil {
		return err
	}
	w := newTable(s.Out)
	fmt.Fprintln(w, "NAME\tSUBJECT\tISSUER\tNOT AFTER\tREMAINING")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Subject, r.Issuer, r.NotAfter, r.Remaining)
	}
	return w.Flush()
}

func newKubernetesCertsCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "certs NAME",
		Short: "List every certificate of a cluster with its expiry",
		Long: `List every certificate the controller stores for the cluster (the three CAs,
then each control plane's etcd, API server, component and admin certificates and
each member's kubelet certificates), as the leader last read them from the
stored PKI: subject, issuer, expiry and the time remaining. No key is shown.
Leaves are renewed at two thirds of their lifetime (the controller's
--leaf-validity); kctl kubernetes health warns (condition Certificates) when one
is within 30 days of expiry, or a quarter of a shorter lifetime.`,
		Example: `  kctl kubernetes certs lab
  kctl kubernetes certs lab -o json | jq '.[] | select(.expired)'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, _, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			kc, _, err := getCluster(cmd, c, args[0])
			if err != nil {
				return err
			}
			now := time.Now()
			rows := make([]certRow, 0, len(kc.Status.Certificates))
			for _, cs := range kc.Status.Certificates {
				t, err := time.Parse(time.RFC3339, cs.NotAfter)
				if err != nil {
					return fmt.Errorf("certificate %s: parse notAfter: %w", cs.Name, err)
				}
				rows = append(rows, newCertRow(cs.Name, cs.Subject, cs.Issuer, t, now))
			}
			return printCerts(s, rows, output)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newControllerCertsCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "List the controller's certificates with their expiry",
		Long: `List the certificates of the controller as they are in use: the CA of the
context, the certificate each replica presents on its API port (read from a TLS
handshake with every member), and the context's own client certificate. Each
replica renews its certificate at two thirds of its lifetime (--leaf-validity)
and loads it without a restart; the context's certificate is the operator's.`,
		Example: `  kctl controller certs
  kctl controller certs -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, x, err := ctlClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			creds, err := x.Credentials()
			if err != nil {
				return err
			}
			now := time.Now()
			var rows []certRow
			ca, err := pki.ParseCert(creds.CA)
			if err != nil {
				return fmt.Errorf("context %q: ca: %w", x.Name, err)
			}
			rows = append(rows, newCertRow("ca", ca.Subject.String(), ca.Issuer.String(), ca.NotAfter, now))
			addrs := x.Controllers
			if ms, err := c.Members(cmdContext(cmd)); err == nil {
				addrs = nil
				for _, m := range ms {
					if m.HTTPAddr != "" {
						addrs = append(addrs, m.HTTPAddr)
					}
				}
			}
			pool := x509.NewCertPool()
			pool.AddCert(ca)
			pair, err := tls.X509KeyPair(creds.Cert, creds.Key)
			if err != nil {
				return fmt.Errorf("context %q: %w", x.Name, err)
			}
			for _, a := range addrs {
				leaf, err := presented(cmdContext(cmd), a, pool, pair)
				if err != nil {
					return err
				}
				rows = append(rows, newCertRow("replica "+hostPort(a), leaf.Subject.String(), leaf.Issuer.String(), leaf.NotAfter, now))
			}
			own, err := pki.ParseCert(creds.Cert)
			if err != nil {
				return fmt.Errorf("context %q: %w", x.Name, err)
			}
			rows = append(rows, newCertRow("context "+x.Name, own.Subject.String(), own.Issuer.String(), own.NotAfter, now))
			return printCerts(s, rows, output)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// hostPort strips a scheme from a controller address.
func hostPort(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		return u.Host
	}
	return strings.TrimSuffix(addr, "/")
}

// presented is the certificate the replica at addr presents, read from a
// TLS handshake that trusts only the context's CA.
func presented(ctx context.Context, addr string, pool *x509.CertPool, pair tls.Certificate) (*x509.Certificate, error) {
	hp := hostPort(addr)
	host, _, err := net.SplitHostPort(hp)
	if err != nil {
		return nil, fmt.Errorf("read certificate of %s: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, certDialTimeout)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool, ServerName: host, Certificates: []tls.Certificate{pair}}}
	conn, err := d.DialContext(ctx, "tcp", hp)
	if err != nil {
		return nil, fmt.Errorf("read certificate of %s: %w", addr, err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}
