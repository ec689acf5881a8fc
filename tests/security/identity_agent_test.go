package security

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/agent"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/runtime"
	"kcore.dev/kcore/tests/harness"
)

// TestAgentRenewsOverTLS runs a real agent against the real API with a
// certificate issued 20 of its 24 hours ago (the controller's clock was
// set back for the join): the agent renews it through the renew route,
// stores the new pair and presents it on new handshakes, without a
// restart; once the old certificate is revoked the agent still gets in.
func TestAgentRenewsOverTLS(t *testing.T) {
	e := newEnv(t, 1)
	tok := e.newToken(apiv1.TokenRequest{NodeID: "n1"})
	e.clock.Advance(-20 * time.Hour)
	jr, err := client.Join(context.Background(), client.Config{Addresses: []string{e.leader().Addr}, CA: e.ca.CertPEM}, tok.Token, "n1")
	e.clock.Advance(20 * time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	old := pki.KeyPair{CertPEM: []byte(jr.Cert), KeyPEM: []byte(jr.Key)}
	root, sup := agentRoot(t, agent.Credentials{Cert: old.CertPEM, Key: old.KeyPEM, CA: []byte(jr.CA)})
	var (
		mu       sync.Mutex
		connects int
		source   *agent.CertSource
	)
	a := &agent.Agent{
		NodeID: "n1", Root: root,
		Applier: &agent.Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Connect: func(_ context.Context, c agent.Credentials, certs *agent.CertSource) (agent.Controller, error) {
			mu.Lock()
			defer mu.Unlock()
			connects++
			source = certs
			return client.New(client.Config{Addresses: []string{e.leader().Addr}, CA: c.CA, GetClientCertificate: certs.GetClientCertificate})
		},
		HeartbeatInterval: 50 * time.Millisecond,
		PollWait:          time.Second,
		BackoffMax:        100 * time.Millisecond,
	}
	defer runAgent(t, a)()

	// The files are read, not loaded: LoadCredentials would finish the
	// agent's own change under it.
	var renewed []byte
	e.c.Eventually(harness.DefaultTimeout, func() error {
		c, err := os.ReadFile(filepath.Join(root, agent.CredentialsDir, "node.crt"))
		if err != nil {
			return err
		}
		if string(c) == string(old.CertPEM) {
			return errors.New("not renewed yet")
		}
		renewed = c
		return nil
	})
	cert, err := pki.ParseCert(renewed)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "n1" || !cert.NotAfter.Equal(e.clock.Now().Add(apiv1.DefaultNodeCertValidity)) {
		t.Fatalf("renewed certificate %s until %s", cert.Subject.CommonName, cert.NotAfter)
	}
	e.c.Eventually(harness.DefaultTimeout, func() error {
		mu.Lock()
		src := source
		mu.Unlock()
		if got, _ := src.GetClientCertificate(nil); got == nil || got.Leaf.SerialNumber.Cmp(cert.SerialNumber) != 0 {
			return errors.New("the agent does not present the renewed certificate yet")
		}
		return nil
	})

	// Revoke the old certificate: a new handshake with what the agent
	// presents still gets in.
	r := e.call(e.client(apiv1.RoleClusterAdmin, "alice"), e.leader(), http.MethodPost, apiv1.PathRevocations, apiv1.RevokeRequest{Serial: serialOf(t, old)})
	want(t, r, http.StatusOK, "")
	if !e.handshakeRefused(old, e.leader()) {
		t.Fatal("the old certificate still completes a handshake")
	}
	mu.Lock()
	src := source
	mu.Unlock()
	fresh, err := client.New(client.Config{Addresses: []string{e.leader().Addr}, CA: e.ca.CertPEM, GetClientCertificate: src.GetClientCertificate})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.Heartbeat(context.Background(), "n1"); err != nil {
		t.Fatalf("heartbeat with the agent's current certificate: %v", err)
	}
	if key, err := os.Stat(filepath.Join(root, agent.CredentialsDir, "node.key")); err != nil || key.Mode().Perm() != 0o600 {
		t.Fatalf("stored key: %v %v", key, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 1 {
		t.Fatalf("%d connects, want 1: renewal must not restart the agent", connects)
	}
}

// TestAgentRenewsExpiredCertOverTLS runs a real agent, through a follower
// that forwards its calls, with a certificate that expired three days ago
// (the machine was off over a long weekend): it says once that the
// certificate expired, renews it with no manual step, stores it, and its
// heartbeats, refused while the certificate was expired, get through with
// the new one, without a restart.
func TestAgentRenewsExpiredCertOverTLS(t *testing.T) {
	e := newEnv(t, 3)
	old := e.expiredNode("n1", 3*24*time.Hour)
	root, sup := agentRoot(t, agent.Credentials{Cert: old.CertPEM, Key: old.KeyPEM, CA: e.ca.CertPEM})
	var (
		mu       sync.Mutex
		connects int
	)
	logs := &lockedLog{}
	follower := e.follower()
	a := &agent.Agent{
		NodeID: "n1", Root: root,
		Applier: &agent.Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Log:     slog.New(slog.NewTextHandler(logs, nil)),
		Connect: func(_ context.Context, c agent.Credentials, certs *agent.CertSource) (agent.Controller, error) {
			mu.Lock()
			defer mu.Unlock()
			connects++
			return client.New(client.Config{Addresses: []string{follower.Addr}, CA: c.CA, GetClientCertificate: certs.GetClientCertificate})
		},
		HeartbeatInterval: 50 * time.Millisecond,
		PollWait:          time.Second,
		BackoffMax:        100 * time.Millisecond,
	}
	defer runAgent(t, a)()
	e.c.Eventually(harness.DefaultTimeout, func() error {
		c, err := os.ReadFile(filepath.Join(root, agent.CredentialsDir, "node.crt"))
		if err != nil {
			return err
		}
		if string(c) == string(old.CertPEM) {
			return errors.New("not renewed yet")
		}
		return nil
	})
	// The expired certificate's heartbeats were refused: any heartbeat
	// the leader saw came with the renewed one.
	e.c.Eventually(harness.DefaultTimeout, func() error {
		if _, ok := e.leader().Server.LastSeen("n1"); !ok {
			return errors.New("no heartbeat got through")
		}
		return nil
	})
	if n := logs.count(agent.LogCertExpired); n != 1 {
		t.Fatalf("%d log lines say the certificate expired, want 1:\n%s", n, logs.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if connects != 1 {
		t.Fatalf("%d connects, want 1: renewal must not restart the agent", connects)
	}
}

// lockedLog collects log lines while the agent writes them.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// count is how many lines hold s.
func (l *lockedLog) count(s string) int { return strings.Count(l.String(), s) }

// runAgent runs a until the returned stop is called, which fails t if the
// agent ended with an error.
func runAgent(t *testing.T, a *agent.Agent) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// agentRoot is an agent's root holding creds, and a supervisor on it that
// the test closes at its end.
func agentRoot(t *testing.T, creds agent.Credentials) (string, *runtime.Supervisor) {
	t.Helper()
	root := t.TempDir()
	if err := agent.StoreCredentials(root, creds); err != nil {
		t.Fatal(err)
	}
	sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close() })
	return root, sup
}
