package agent

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/pki"
)

// renewingController is the fake controller plus a renew route that signs
// with a real CA.
type renewingController struct {
	*fakeController
	ca      *pki.CA
	mu      sync.Mutex
	renewed []string
	fail    int
}

func (r *renewingController) RenewNodeCert(_ context.Context, nodeID string) (apiv1.CertResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return apiv1.CertResponse{}, errors.New("controller unavailable")
	}
	kp := issueNode(r.ca, nodeID, time.Now(), 24*time.Hour)
	r.renewed = append(r.renewed, string(kp.CertPEM))
	return apiv1.CertResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(r.ca.CertPEM)}, nil
}

func (r *renewingController) renewals() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.renewed...)
}

func testCA(t *testing.T) *pki.CA {
	t.Helper()
	ca, err := pki.NewCA("kcore-test", time.Now(), 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func issueNode(ca *pki.CA, id string, now time.Time, validity time.Duration) pki.KeyPair {
	kp, err := ca.Issue(pki.CertRequest{CommonName: id, Organization: []string{apiv1.RoleNode}, Usage: pki.UsageClient, Validity: validity}, now)
	if err != nil {
		panic(err)
	}
	return kp
}

func TestRenewAtTwoThirdsOfTheLifetime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &x509.Certificate{NotBefore: t0, NotAfter: t0.Add(24 * time.Hour)}
	if got, want := pki.RenewAt(c), t0.Add(16*time.Hour); !got.Equal(want) {
		t.Fatalf("RenewAt = %s, want %s", got, want)
	}
}

// TestAgentRenewsAndSwapsWithoutRestart runs the agent with a certificate
// already past two thirds of its lifetime: it renews it through the
// controller, stores the new pair and presents it on the next handshake,
// with one connect and no restart.
func TestAgentRenewsAndSwapsWithoutRestart(t *testing.T) {
	root := t.TempDir()
	ca := testCA(t)
	old := issueNode(ca, "node-105", time.Now().Add(-20*time.Hour), 24*time.Hour)
	if err := StoreCredentials(root, Credentials{Cert: old.CertPEM, Key: old.KeyPEM, CA: ca.CertPEM}); err != nil {
		t.Fatal(err)
	}
	ctl := &renewingController{fakeController: newFakeController(), ca: ca, fail: 1}
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	var (
		mu       sync.Mutex
		connects int
		source   *CertSource
	)
	a := &Agent{
		NodeID: "node-105", Root: root,
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Connect: func(_ context.Context, _ Credentials, certs *CertSource) (Controller, error) {
			mu.Lock()
			defer mu.Unlock()
			connects++
			source = certs
			return ctl, nil
		},
		HeartbeatInterval: time.Hour,
		PollWait:          time.Hour,
		BackoffMax:        20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "one renewal after a failed attempt", func() bool { return len(ctl.renewals()) == 1 })
	renewed := ctl.renewals()[0]
	waitFor(t, "the new certificate presented and stored", func() bool {
		mu.Lock()
		src := source
		mu.Unlock()
		if src == nil {
			return false
		}
		cert, _ := src.GetClientCertificate(nil)
		stored, _ := os.ReadFile(filepath.Join(root, CredentialsDir, "node.crt"))
		return cert != nil && cert.Leaf != nil && string(stored) == renewed && cert.Leaf.NotAfter.After(time.Now().Add(23*time.Hour))
	})
	c, ok, err := LoadCredentials(root)
	if err != nil || !ok || string(c.Cert) != renewed {
		t.Fatalf("stored credentials: ok %v err %v", ok, err)
	}
	if _, err := NewCertSource(c); err != nil {
		t.Fatalf("stored key and certificate do not pair: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, CredentialsDir, pendingFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("journal left behind: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 1 {
		t.Fatalf("%d connects, want 1: the certificate is swapped in place", connects)
	}
}

// TestLoadCredentialsFinishesAnInterruptedChange: a crash after the
// journal was written but before node.crt was replaced leaves a new key
// with the old certificate; loading finishes the change.
func TestLoadCredentialsFinishesAnInterruptedChange(t *testing.T) {
	root := t.TempDir()
	ca := testCA(t)
	old := issueNode(ca, "n1", time.Now(), time.Hour)
	next := issueNode(ca, "n1", time.Now(), time.Hour)
	if err := StoreCredentials(root, Credentials{Cert: old.CertPEM, Key: old.KeyPEM, CA: ca.CertPEM}); err != nil {
		t.Fatal(err)
	}
	journal := `{"cert":` + jsonBytes(next.CertPEM) + `,"key":` + jsonBytes(next.KeyPEM) + `,"ca":` + jsonBytes(ca.CertPEM) + `}`
	dir := filepath.Join(root, CredentialsDir)
	if err := os.WriteFile(filepath.Join(dir, pendingFile), []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node.key"), next.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok, err := LoadCredentials(root)
	if err != nil || !ok {
		t.Fatalf("load: ok %v err %v", ok, err)
	}
	if string(c.Cert) != string(next.CertPEM) || string(c.Key) != string(next.KeyPEM) {
		t.Fatal("load did not finish the interrupted change")
	}
	if _, err := NewCertSource(c); err != nil {
		t.Fatalf("loaded pair does not match: %v", err)
	}
	if cert, _ := os.ReadFile(filepath.Join(dir, "node.crt")); string(cert) != string(next.CertPEM) {
		t.Fatal("node.crt not replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, pendingFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("journal left behind: %v", err)
	}
}

func jsonBytes(b []byte) string {
	out, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// logLines is a slog handler's output, safe to read while the agent logs.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count is how many lines hold s.
func (l *logLines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// TestAgentRenewsAnExpiredCertificateAtOnce: an agent started with a
// certificate that expired while the machine was off renews it at once
// (its renewal time is long past), retrying a failed renewal, says once
// that it expired and is being renewed, and keeps heartbeating.
func TestAgentRenewsAnExpiredCertificateAtOnce(t *testing.T) {
	root := t.TempDir()
	ca := testCA(t)
	old := issueNode(ca, "node-105", time.Now().Add(-72*time.Hour), 24*time.Hour)
	if err := StoreCredentials(root, Credentials{Cert: old.CertPEM, Key: old.KeyPEM, CA: ca.CertPEM}); err != nil {
		t.Fatal(err)
	}
	ctl := &renewingController{fakeController: newFakeController(), ca: ca, fail: 2}
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	logs := &logLines{}
	a := &Agent{
		NodeID: "node-105", Root: root,
		Applier:           &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Connect:           func(context.Context, Credentials, *CertSource) (Controller, error) { return ctl, nil },
		Log:               slog.New(slog.NewTextHandler(logs, nil)),
		HeartbeatInterval: 10 * time.Millisecond,
		PollWait:          time.Hour,
		BackoffMax:        20 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitFor(t, "one renewal after two failed attempts", func() bool { return len(ctl.renewals()) == 1 })
	heartbeats := func() int {
		ctl.fakeController.mu.Lock()
		defer ctl.fakeController.mu.Unlock()
		return ctl.fakeController.heartbeats
	}
	beats := heartbeats()
	waitFor(t, "heartbeats after the renewal", func() bool { return heartbeats() > beats })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := logs.count(LogCertExpired); n != 1 {
		t.Fatalf("%d lines say the certificate expired, want 1:\n%s", n, logs.buf.String())
	}
	stored, _ := os.ReadFile(filepath.Join(root, CredentialsDir, "node.crt"))
	if string(stored) != ctl.renewals()[0] {
		t.Fatal("the renewed certificate is not stored")
	}
}
