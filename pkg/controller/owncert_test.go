package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
)

// serverSerial does one GET of the members on addr through c and returns
// the serial of the certificate the replica presented and whether the
// request went over a connection opened before.
func serverSerial(c *http.Client, addr string) (*big.Int, bool, error) {
	reused := false
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+apiv1.PathMembers, nil)
	if err != nil {
		return nil, false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	// Read to the end, so the connection goes back to the pool.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return nil, reused, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, reused, fmt.Errorf("members: status %d", resp.StatusCode)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber, reused, nil
}

// TestOwnCertificateRotatesUnderOpenConnections runs two real replicas
// (TLS API, TLS raft). An operator replaces the first replica's
// certificate files with a pair already past two thirds of its life: the
// replica loads it, then renews it itself for the configured leaf
// lifetime, both without a restart. New handshakes get the renewed
// certificate, the API connection opened before either rotation keeps
// serving, and raft keeps replicating.
func TestOwnCertificateRotatesUnderOpenConnections(t *testing.T) {
	ca, key := testPKI(t)
	lt := pki.Lifetime{Leaf: pki.MinLeafValidity}
	dir := writePKI(t, ca, key)
	first, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: dir, Bootstrap: true, FastTimeouts: true,
		Lifetime: lt, CertCheckInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	second, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: writePKI(t, ca, key),
		Join: []string{first.HTTPAddr()}, FastTimeouts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	admin := adminClient(t, ca)
	poll(t, func() error {
		ms, err := members(admin, first.HTTPAddr())
		if err == nil && len(ms) != 2 {
			err = fmt.Errorf("members %+v: want 2", ms)
		}
		return err
	})
	before, _, err := serverSerial(admin, first.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}

	// The operator's pair: valid, but issued 50 minutes ago for an hour.
	old := issueOwn(t, ca, time.Now().Add(-50*time.Minute), time.Hour)
	oldCert, err := pki.ParseCert(old.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	replaceOwn(t, dir, old)

	fresh := adminClient(t, ca)
	var renewed *big.Int
	poll(t, func() error {
		// Each probe opens a new connection, so it sees the current certificate.
		fresh.Transport.(*http.Transport).CloseIdleConnections()
		resp, err := fresh.Get("https://" + first.HTTPAddr() + apiv1.PathMembers)
		if err != nil {
			return err
		}
		resp.Body.Close()
		leaf := resp.TLS.PeerCertificates[0]
		if leaf.SerialNumber.Cmp(before) == 0 || leaf.SerialNumber.Cmp(oldCert.SerialNumber) == 0 {
			return fmt.Errorf("replica still presents serial %s", leaf.SerialNumber.Text(16))
		}
		if got := leaf.NotAfter.Sub(leaf.NotBefore); got != lt.Leaf+time.Minute {
			return fmt.Errorf("renewed certificate valid for %s, want %s", got, lt.Leaf+time.Minute)
		}
		if leaf.Subject.CommonName != "controller" || leaf.Subject.Organization[0] != apiv1.RoleController {
			return fmt.Errorf("renewed certificate names %s", leaf.Subject)
		}
		renewed = leaf.SerialNumber
		return nil
	})
	onDisk, err := os.ReadFile(filepath.Join(dir, FileServerCert))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := pki.ParseCert(onDisk); err != nil || c.SerialNumber.Cmp(renewed) != 0 {
		t.Fatalf("server.crt on disk is not the renewed certificate (%v)", err)
	}

	// The connection opened before both rotations still serves.
	serial, reused, err := serverSerial(admin, first.HTTPAddr())
	if err != nil {
		t.Fatalf("request over the connection opened before the rotation: %v", err)
	}
	if !reused || serial.Cmp(before) != 0 {
		t.Fatalf("request went over a new connection (reused %v, serial %s, before %s, renewed %s): want the one opened before", reused, serial.Text(16), before.Text(16), renewed.Text(16))
	}

	// Raft still replicates, and a fresh raft handshake takes the new pair.
	req, _ := http.NewRequest(http.MethodPut, "https://"+first.HTTPAddr()+apiv1.ObjectPath("Note", "after-rotation"), jsonBody(`{"a":1}`))
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("write after the rotation: status %d", resp.StatusCode)
	}
	poll(t, func() error {
		if _, ok := second.Node().State().Get("Note", "after-rotation"); !ok {
			return fmt.Errorf("write not replicated to the second replica")
		}
		return nil
	})
	peer, err := ca.Issue(pki.CertRequest{CommonName: "peer", Organization: []string{apiv1.RoleController}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(peer.CertPEM, peer.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", first.RaftAddr(), &tls.Config{
		MinVersion: tls.VersionTLS13, RootCAs: ca.Pool(), Certificates: []tls.Certificate{pair}, ServerName: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("raft handshake after the rotation: %v", err)
	}
	defer conn.Close()
	if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(renewed) != 0 {
		t.Fatalf("raft listener presents serial %s, want the renewed %s", got.Text(16), renewed.Text(16))
	}
}

// TestOwnCertKeepsPairOnMismatch checks a certificate written without its
// key (a writer between its two renames) is not taken: the replica keeps
// presenting the pair it has until the files match again.
func TestOwnCertKeepsPairOnMismatch(t *testing.T) {
	ca, key := testPKI(t)
	dir := writePKI(t, ca, key)
	certPEM, _ := os.ReadFile(filepath.Join(dir, FileServerCert))
	keyPEM, _ := os.ReadFile(filepath.Join(dir, FileServerKey))
	o, err := newOwnCert(dir, ca, certPEM, keyPEM, pki.Lifetime{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	was := o.Leaf().SerialNumber
	next, err := ca.Issue(pki.RenewalRequest(o.Leaf(), time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(filepath.Join(dir, FileServerCert), next.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if changed, err := o.reload(); err == nil || changed || o.Leaf().SerialNumber.Cmp(was) != 0 {
		t.Fatalf("reload of a mismatched pair = %v, %v; want an error and the old certificate kept", changed, err)
	}
	if err := writeAtomic(filepath.Join(dir, FileServerKey), next.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := o.reload(); err != nil || !changed || o.Leaf().SerialNumber.Cmp(was) == 0 {
		t.Fatalf("reload of the whole new pair = %v, %v; want the new certificate", changed, err)
	}
}

// TestExpiredOwnCertRenewedBeforeServing: a replica whose own certificate
// expired while it was off presents a renewed, valid one on the very first
// handshake after Start returns, with no check interval waited out.
func TestExpiredOwnCertRenewedBeforeServing(t *testing.T) {
	ca, err := pki.NewCA("kcore", time.Now().Add(-24*time.Hour), 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := writePKI(t, ca, key)
	replaceOwn(t, dir, issueOwn(t, ca, time.Now().Add(-2*time.Hour), time.Hour))
	c, err := Start(context.Background(), Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: dir, Bootstrap: true, FastTimeouts: true,
		Lifetime: pki.Lifetime{Leaf: pki.MinLeafValidity}, CertCheckInterval: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	conn, err := tls.Dial("tcp", c.HTTPAddr(), &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatalf("first handshake after Start: %v", err)
	}
	defer conn.Close()
	got := conn.ConnectionState().PeerCertificates[0]
	if !time.Now().Before(got.NotAfter) {
		t.Fatalf("first handshake presented a certificate that expired at %s", got.NotAfter)
	}
}

// TestCertCheckIntervalFor: long-lived leaves are looked at every minute; a
// short-lived one often enough that its renewal, due at two thirds, happens
// before the last quarter of its life in which the Certificates condition
// warns; and a Config without an interval takes the one for its lifetime.
func TestCertCheckIntervalFor(t *testing.T) {
	for _, tt := range []struct {
		lt   pki.Lifetime
		want time.Duration
	}{
		{pki.Lifetime{}, DefaultCertCheckInterval},
		{pki.Lifetime{Leaf: 24 * time.Minute}, time.Minute},
		{pki.Lifetime{Leaf: 12 * time.Minute}, 30 * time.Second},
		{pki.Lifetime{Leaf: pki.MinLeafValidity}, pki.MinLeafValidity / CertChecksPerLifetime},
	} {
		got := CertCheckIntervalFor(tt.lt)
		if got != tt.want {
			t.Errorf("CertCheckIntervalFor(%s) = %s, want %s", tt.lt.LeafValidity(), got, tt.want)
		}
		life := tt.lt.LeafValidity()
		if latest := life/pki.RenewDen*pki.RenewNum + got; latest >= life-life/4 {
			t.Errorf("leaf of %s: renewed as late as %s, inside its last quarter", life, latest)
		}
		c, err := Config{DataDir: "d", PKIDir: "p", Listen: ":7443", Lifetime: tt.lt}.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		if c.CertCheckInterval != tt.want {
			t.Errorf("Config under %s: CertCheckInterval %s, want %s", life, c.CertCheckInterval, tt.want)
		}
	}
}
