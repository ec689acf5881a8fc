package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/controller"
)

// startController runs a real single-replica controller in process from the
// PKI of kctl controller init, listening on a port the kernel picks, and
// points the kctl context at it.
func startController(t *testing.T, e *kctlEnv, pkiDir string) *controller.Controller {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := controller.Start(ctx, controller.Config{
		DataDir:      filepath.Join(e.dir, "data"),
		Listen:       "127.0.0.1:0",
		Bootstrap:    true,
		PKIDir:       pkiDir,
		FastTimeouts: true,
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := c.Close(); err != nil {
			t.Errorf("close controller: %v", err)
		}
	})
	setControllers(t, e, c.HTTPAddr())
	return c
}

// TestControllerEndToEnd is the README's first steps: kctl controller init,
// kcore-controller --bootstrap, kctl controller members; then a join token,
// a viewer's certificate that cannot write, the audit trail of the refusal,
// the last voter's removal refused, and a snapshot round trip.
func TestControllerEndToEnd(t *testing.T) {
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctl := startController(t, e, filepath.Join(pkiDir, "controller-0"))

	members := e.must("controller", "members")
	lines := strings.Split(strings.TrimSpace(members), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("members:\n%s", members)
	}
	fields := strings.Fields(lines[1])
	if len(fields) != 7 || fields[2] != ctl.HTTPAddr() || fields[1] != ctl.RaftAddr() || !strings.EqualFold(fields[3], "voter") || fields[4] != "*" || fields[5] != "leader" {
		t.Fatalf("members row %q, want one voting leader at %s (raft %s)", lines[1], ctl.HTTPAddr(), ctl.RaftAddr())
	}

	token := e.must("node", "token", "create", "--node", "node-105", "--ttl", "10m")
	tok := strings.SplitN(token, "\n", 2)[0]
	if tok == "" || !strings.Contains(token, "--join-token "+tok+" --node-id node-105") {
		t.Fatalf("token output:\n%s", token)
	}
	// A token for an id that is not a node id, or a lifetime outside the
	// bounds, is refused before the controller is asked.
	for _, args := range [][]string{
		{"--node", ".."}, {"--node", "-"}, {"--node", "a."}, {"--node", "-a"},
		{"--node", "n1", "--ttl", "1ns"}, {"--node", "n1", "--ttl", "0"},
		{"--node", "n1", "--ttl", "-1h"}, {"--node", "n1", "--ttl", "100000h"},
	} {
		_, _, err := e.run(append([]string{"node", "token", "create"}, args...)...)
		if err == nil || !(strings.Contains(err.Error(), "want a duration from 1m0s to 168h0m0s") || strings.Contains(err.Error(), "invalid node id")) {
			t.Fatalf("token create %v = %v, want a refusal naming the bound", args, err)
		}
	}

	e.must("cert", "issue", "--role", "viewer", "--name", "alice")
	cfg := e.load()
	viewerCtx, err := cfg.Context("alice@lab")
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := clientFor(viewerCtx)
	if err != nil {
		t.Fatal(err)
	}
	defer viewer.Close()
	ctx := t.Context()
	if _, err := viewer.Put(ctx, "Probe", "lab", []byte(`{}`), nil); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("viewer PUT = %v, want ErrForbidden", err)
	}
	if _, err := viewer.Put(ctx, "KubernetesCluster", "lab", []byte(`{}`), nil); !errors.Is(err, client.ErrPlanRequired) {
		t.Fatalf("viewer PUT of a cluster = %v, want ErrPlanRequired", err)
	}
	if out := e.must("--context", "alice@lab", "controller", "members"); !strings.Contains(out, ctl.HTTPAddr()) {
		t.Fatalf("viewer cannot read members:\n%s", out)
	}
	if _, _, err := e.run("--context", "alice@lab", "node", "token", "create", "--node", "n2"); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("viewer token create = %v, want ErrForbidden", err)
	}

	audit := e.must("audit", "--object", "Probe/lab")
	if !strings.Contains(audit, "alice") || !strings.Contains(audit, "403 forbidden") {
		t.Fatalf("audit does not show alice's refused PUT:\n%s", audit)
	}
	audit = e.must("audit", "--object", "KubernetesCluster/lab")
	if !strings.Contains(audit, "alice") || !strings.Contains(audit, "405 plan-required") {
		t.Fatalf("audit does not show alice's PUT of a cluster refused for skipping the plan:\n%s", audit)
	}

	_, _, err = e.run("controller", "remove", strings.Fields(lines[1])[0])
	if err == nil || !strings.Contains(err.Error(), "refused to remove") {
		t.Fatalf("removing the last voter = %v", err)
	}

	snap := filepath.Join(e.dir, "state.snap")
	e.must("controller", "snapshot", "save", snap)
	e.must("controller", "snapshot", "restore", "--yes", snap)
	if out := e.must("controller", "members"); !strings.Contains(out, "*") {
		t.Fatalf("members after restore:\n%s", out)
	}
}
