package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
)

// writePKI writes a replica's PKI directory as `kctl controller init` does.
func writePKI(t *testing.T, ca *pki.CA, key []byte) string {
	t.Helper()
	dir := t.TempDir()
	kp := issueOwn(t, ca, time.Now(), time.Hour)
	files := map[string][]byte{
		FileCACert: ca.CertPEM, FileCAKey: ca.KeyPEM,
		FileServerCert: kp.CertPEM, FileServerKey: kp.KeyPEM,
		FileEncryptionKey: key,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testPKI is a CA made now for an hour and an encryption key, what every
// replica of a test shares.
func testPKI(t *testing.T) (*pki.CA, []byte) {
	t.Helper()
	ca, err := pki.NewCA("kcore", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// issueOwn issues a replica's own certificate (role controller, for
// 127.0.0.1 and localhost) from ca, valid from issued for validity.
func issueOwn(t *testing.T, ca *pki.CA, issued time.Time, validity time.Duration) pki.KeyPair {
	t.Helper()
	kp, err := ca.Issue(pki.CertRequest{
		CommonName: "controller", Organization: []string{apiv1.RoleController},
		DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		Usage: pki.UsageServer | pki.UsageClient, Validity: validity,
	}, issued)
	if err != nil {
		t.Fatal(err)
	}
	return kp
}

// replaceOwn writes kp as the replica's own pair in dir, as an operator or
// the replica's renewal does: the key first, then the certificate.
func replaceOwn(t *testing.T, dir string, kp pki.KeyPair) {
	t.Helper()
	if err := writeAtomic(filepath.Join(dir, FileServerKey), kp.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(filepath.Join(dir, FileServerCert), kp.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
}

func poll(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		<-tick.C
	}
}

func adminClient(t *testing.T, ca *pki.CA) *http.Client {
	t.Helper()
	kp, err := ca.Issue(pki.CertRequest{CommonName: "admin", Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: []tls.Certificate{cert}}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func members(c *http.Client, addr string) ([]apiv1.Member, error) {
	resp, err := c.Get("https://" + addr + apiv1.PathMembers)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("members: status %d", resp.StatusCode)
	}
	var ms []apiv1.Member
	return ms, json.NewDecoder(resp.Body).Decode(&ms)
}

// TestBootstrapAndJoin runs three real replicas (TLS API, TLS raft) from PKI
// files: the first bootstraps, the others join through a member's API.
func TestBootstrapAndJoin(t *testing.T) {
	ca, key := testPKI(t)
	ctx := context.Background()
	first, err := Start(ctx, Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: writePKI(t, ca, key),
		Bootstrap: true, FastTimeouts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	admin := adminClient(t, ca)
	poll(t, func() error {
		ms, err := members(admin, first.HTTPAddr())
		if err != nil {
			return err
		}
		if len(ms) != 1 || !ms[0].Leader || ms[0].HTTPAddr != first.HTTPAddr() {
			return fmt.Errorf("members %+v: want the bootstrapped leader with its API address", ms)
		}
		return nil
	})

	second, err := Start(ctx, Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: writePKI(t, ca, key),
		Join: []string{"https://" + first.HTTPAddr()}, FastTimeouts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	poll(t, func() error {
		ms, err := members(admin, second.HTTPAddr())
		if err != nil {
			return err
		}
		if len(ms) != 2 {
			return fmt.Errorf("members %+v: want 2", ms)
		}
		for _, m := range ms {
			if m.HTTPAddr == "" || m.Suffrage != "voter" {
				return fmt.Errorf("member %+v: want a voter with an API address", m)
			}
		}
		return nil
	})
	// A third replica joins through the follower, which forwards the join
	// to the leader on the joining replica's behalf.
	third, err := Start(ctx, Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: writePKI(t, ca, key),
		Join: []string{second.HTTPAddr()}, FastTimeouts: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { third.Close() })
	poll(t, func() error {
		ms, err := members(admin, first.HTTPAddr())
		if err != nil {
			return err
		}
		if len(ms) != 3 {
			return fmt.Errorf("members %+v: want 3", ms)
		}
		return nil
	})
	// A write on the follower is forwarded and replicated back over TLS raft.
	req, _ := http.NewRequest(http.MethodPut, "https://"+second.HTTPAddr()+apiv1.ObjectPath("Note", "n1"), jsonBody(`{"hello":"world"}`))
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("forwarded write: status %d", resp.StatusCode)
	}
	poll(t, func() error {
		for _, c := range []*Controller{first, second, third} {
			if _, ok := c.Node().State().Get("Note", "n1"); !ok {
				return fmt.Errorf("write not replicated to %s", c.HTTPAddr())
			}
		}
		return nil
	})
}

// TestRaftRefusesForeignPeer checks the raft stream layer refuses a peer
// whose certificate is not role controller.
func TestRaftRefusesForeignPeer(t *testing.T) {
	ca, err := pki.NewCA("kcore", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(role string) tls.Certificate {
		kp, err := ca.Issue(pki.CertRequest{CommonName: role, Organization: []string{role},
			IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		c, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewTLSStreamLayer(ln, nil, issue(apiv1.RoleController), ca.Pool(), RaftLimits{}, nil)
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 1)
				if _, err := c.Read(b); err == nil {
					_, _ = c.Write(b)
				}
			}()
		}
	}()
	tests := []struct {
		role string
		ok   bool
	}{
		{apiv1.RoleController, true},
		{apiv1.RoleClusterAdmin, false},
		{apiv1.RoleNode, false},
	}
	for _, tt := range tests {
		t.Run(tt.role, func(t *testing.T) {
			ln2, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cli := NewTLSStreamLayer(ln2, nil, issue(tt.role), ca.Pool(), RaftLimits{}, nil)
			defer cli.Close()
			c, err := cli.Dial(raftAddr(srv.Addr()), 5*time.Second)
			if err == nil {
				// TLS 1.3: the server's verdict on the client certificate
				// arrives with the first read.
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = c.Write([]byte{0})
				if err == nil {
					_, err = c.Read(make([]byte, 1))
				}
				c.Close()
			}
			refused := err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
			if refused == tt.ok {
				t.Fatalf("role %s: err %v, want ok=%v", tt.role, err, tt.ok)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name     string
		in       Config
		raft     string
		key      string
		wantsErr bool
	}{
		{"raft on port + 1", Config{DataDir: "d", PKIDir: "p", Listen: "127.0.0.1:7443", Bootstrap: true}, "127.0.0.1:7444", "p/encryption.key", false},
		{"ephemeral ports", Config{DataDir: "d", PKIDir: "p", Listen: "127.0.0.1:0"}, "127.0.0.1:0", "p/encryption.key", false},
		{"explicit", Config{DataDir: "d", PKIDir: "p", Listen: ":7443", RaftListen: ":9000", EncryptionKeyFile: "k"}, ":9000", "k", false},
		{"bootstrap and join", Config{DataDir: "d", PKIDir: "p", Listen: ":7443", Bootstrap: true, Join: []string{"x:1"}}, "", "", true},
		{"no data dir", Config{PKIDir: "p", Listen: ":7443"}, "", "", true},
		{"no pki dir", Config{DataDir: "d", Listen: ":7443"}, "", "", true},
		{"bolt log store", Config{DataDir: "d", PKIDir: "p", Listen: ":7443", LogStore: "bolt"}, ":7444", "p/encryption.key", false},
		{"unknown log store", Config{DataDir: "d", PKIDir: "p", Listen: ":7443", LogStore: "leveldb"}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.withDefaults()
			if tt.wantsErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.RaftListen != tt.raft || got.EncryptionKeyFile != tt.key {
				t.Fatalf("raft %q key %q, want %q %q", got.RaftListen, got.EncryptionKeyFile, tt.raft, tt.key)
			}
		})
	}
}

// TestNodeCertGraceBounds: --node-cert-grace is taken at its bounds, off
// and by default, and refused just past the bounds with a message naming
// the flag.
func TestNodeCertGraceBounds(t *testing.T) {
	for _, tt := range []struct {
		grace time.Duration
		ok    bool
	}{
		{0, true}, {server.NoNodeCertGrace, true},
		{server.MinNodeCertGrace, true}, {server.MaxNodeCertGrace, true},
		{server.MinNodeCertGrace - time.Nanosecond, false}, {server.MaxNodeCertGrace + time.Nanosecond, false},
		{-time.Hour, false},
	} {
		_, err := Config{DataDir: "d", PKIDir: "p", Listen: ":7443", NodeCertGrace: tt.grace}.withDefaults()
		if (err == nil) != tt.ok {
			t.Fatalf("grace %s: err %v, want ok=%v", tt.grace, err, tt.ok)
		}
		if err != nil && (!errors.Is(err, server.ErrBadNodeCertGrace) || !strings.Contains(err.Error(), "--node-cert-grace")) {
			t.Fatalf("grace %s: %v", tt.grace, err)
		}
	}
}
