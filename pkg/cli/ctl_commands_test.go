package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/kctlconfig"
)

func TestControllerMembersTable(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	// The replicas' HTTP addresses are loopback ports picked at run time,
	// so the table is checked by its fields.
	rows := strings.Split(strings.TrimSpace(e.must("controller", "members")), "\n")
	want := [][]string{
		{"ID", "RAFT", "ADDRESS", "HTTP", "ADDRESS", "SUFFRAGE", "LEADER", "STATE", "SCHEMA"},
		{"controller-0", "10.0.0.1:7000", f.srv.Listener.Addr().String(), "voter", "*", "leader", "2"},
		{"controller-1", "10.0.0.2:7000", f.closed, "voter", "unreachable", "-"},
		{"controller-2", "10.0.0.3:7000", "-", "nonvoter", "-", "-"},
	}
	if len(rows) != len(want) {
		t.Fatalf("members table:\n%s", strings.Join(rows, "\n"))
	}
	for i, r := range rows {
		if got := strings.Fields(r); !slices.Equal(got, want[i]) {
			t.Errorf("row %d = %q, want %q", i, got, want[i])
		}
	}
	out := e.must("controller", "members", "-o", "json")
	var ms []memberView
	if err := json.Unmarshal([]byte(out), &ms); err != nil || len(ms) != 3 {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if !ms[0].Reachable || ms[0].Schema != 2 || ms[1].Reachable || ms[1].State != "unreachable" || ms[2].State != "-" {
		t.Fatalf("probed members: %+v", ms)
	}
}

func TestControllerAddRemove(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	out := e.must("controller", "add", "--id", "controller-3", "--raft-addr", "10.0.0.4:7000", "--http-addr", "10.0.0.4:7443")
	if !strings.Contains(out, "added controller-3") || f.lastCall() != "POST /v1/members" {
		t.Fatalf("add: %q, %s", out, f.lastCall())
	}
	if out := e.must("controller", "remove", "controller-2"); out != "removed controller-2\n" {
		t.Fatalf("remove: %q", out)
	}
	_, _, err := e.run("controller", "remove", "controller-0")
	if err == nil || !strings.Contains(err.Error(), "refused to remove controller-0: removing controller-0 would leave 1 of 3 voters") {
		t.Fatalf("quorum loss: %v", err)
	}
}

func TestNodeTokenCreate(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	caOut := filepath.Join(e.dir, "node-ca.crt")
	out := e.must("node", "token", "create", "--node", "node-105", "--ttl", "15m", "--ca-out", caOut)
	addr := f.srv.Listener.Addr().String()
	for _, want := range []string{
		"kcj-0123456789abcdef\n",
		"expires 2026-11-29T23:00:00Z",
		"kcore-node-agent --controller https://" + addr + " --ca-file " + caOut + " --join-token kcj-0123456789abcdef --node-id node-105",
		"for node node-105 only",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ca, err := os.ReadFile(caOut)
	if err != nil || !strings.Contains(string(ca), "BEGIN CERTIFICATE") {
		t.Fatalf("ca-out: %v %q", err, ca)
	}
	out = e.must("node", "token", "create", "--node", "node-105", "--rekey")
	if !strings.Contains(out, "revokes the node's earlier certificates") {
		t.Fatalf("rekey token: %s", out)
	}
}

func TestCertRevoke(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	out := e.must("cert", "revoke", "5F:3A")
	if out != "revoked node certificate 5f3a of node-105 (it expires 2026-11-30T12:00:00Z)\n" || f.lastCall() != "POST /v1/revocations" {
		t.Fatalf("revoke: %q, %s", out, f.lastCall())
	}
	if _, _, err := e.run("cert", "revoke", "abc"); err == nil || !strings.Contains(err.Error(), "no issued certificate with serial abc") {
		t.Fatalf("revoke of an unknown serial: %v", err)
	}
	if _, _, err := e.run("cert", "revoke"); err == nil {
		t.Fatal("revoke without a serial succeeded")
	}
}

func TestCertIssueWritesContexts(t *testing.T) {
	e := newKctlEnv(t)
	startFakeController(t, e)
	out := e.must("cert", "issue", "--role", "viewer", "--name", "alice")
	if !strings.Contains(out, `added context "alice@lab"`) {
		t.Fatalf("output: %s", out)
	}
	cfg := e.load()
	if cfg.CurrentContext != "lab" {
		t.Fatalf("cert issue switched the current context to %q", cfg.CurrentContext)
	}
	x, err := cfg.Context("alice@lab")
	if err != nil || x.Role != "viewer" || x.User != "alice" {
		t.Fatalf("context: %+v, %v", x, err)
	}
	// The viewer's certificate works, and the fake controller refuses its write.
	c, err := clientFor(x)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Put(t.Context(), "Probe", "lab", []byte(`{}`), nil); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("viewer put = %v, want ErrForbidden", err)
	}

	if _, _, err := e.run("cert", "issue", "--role", "viewer", "--name", "alice"); !errors.Is(err, ErrCredentialsExist) {
		t.Fatalf("second issue = %v, want ErrCredentialsExist", err)
	}
	if _, _, err := e.run("cert", "issue", "--role", "root", "--name", "eve"); err == nil {
		t.Fatal("issued a certificate for an unknown role")
	}

	file := filepath.Join(e.dir, "bob.kctl")
	e.must("cert", "issue", "--role", "operator", "--name", "bob", "--out", file)
	bob, err := kctlconfig.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if bob.CurrentContext != "bob@lab" || len(bob.Contexts) != 1 || bob.Contexts[0].Role != "operator" {
		t.Fatalf("standalone config: %+v", bob)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("standalone config mode: %v %v", fi.Mode(), err)
	}
	if e.load().Has("bob@lab") {
		t.Fatal("--out also wrote into the user's config")
	}
	if _, _, err := e.run("cert", "issue", "--role", "operator", "--name", "bob", "--out", file); !errors.Is(err, ErrCredentialsExist) {
		t.Fatalf("overwrite --out = %v", err)
	}
}

func TestAuditTable(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	golden(t, "ctl/audit.txt", []byte(e.must("audit", "--since", "2026-11-29T20:00:00Z", "--object", "KubernetesCluster/lab", "--limit", "3")))
	if got := f.lastCall(); got != "GET /v1/audit?limit=3&object=KubernetesCluster%2Flab&since=2026-11-29T20%3A00%3A00Z" {
		t.Fatalf("request = %s", got)
	}
	if out := e.must("audit", "-o", "json"); !strings.Contains(out, `"subject": "alice"`) {
		t.Fatalf("json:\n%s", out)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 29, 22, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"", time.Time{}, false},
		{"1h", now.Add(-time.Hour), false},
		{"90m", now.Add(-90 * time.Minute), false},
		{"2026-11-29T08:00:00Z", time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), false},
		{"-1h", time.Time{}, true},
		{"yesterday", time.Time{}, true},
	} {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestSnapshotSaveRestore(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	f.snapshot = []byte("snapshot-bytes")
	file := filepath.Join(e.dir, "state.snap")
	if out := e.must("controller", "snapshot", "save", file); out != "saved a snapshot of 14 bytes to "+file+"\n" {
		t.Fatalf("save: %q", out)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v", fi, err)
	}
	if err := os.WriteFile(file, []byte("other-bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.must("controller", "snapshot", "restore", "--yes", file)
	if string(f.snapshot) != "other-bytes" {
		t.Fatalf("restore sent %q", f.snapshot)
	}
}
