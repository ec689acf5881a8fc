package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKubeconfigWritesPrivateFile(t *testing.T) {
	e := newKctlEnv(t)
	f := startFakeController(t, e)
	out := filepath.Join(e.dir, "lab.kubeconfig")
	_, errOut, err := e.run("kubernetes", "kubeconfig", "lab", "--out", out, "--ttl", "1h")
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	if got := f.lastCall(); got != "POST /v1/clusters/lab/kubeconfig" {
		t.Fatalf("called %q", got)
	}
	st, err := os.Stat(out)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig file: %v mode %v, want 0600", err, st)
	}
	if !strings.Contains(errOut, "kcore:admin") || !strings.Contains(errOut, "2026-11-30T05:00:00Z") {
		t.Errorf("stderr does not say for whom and until when:\n%s", errOut)
	}
	if _, _, err := e.run("kubernetes", "kubeconfig", "lab", "--out", out); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("overwrite without --force = %v", err)
	}
	e.must("kubernetes", "kubeconfig", "lab", "--out", out, "--force")
	if stdout := e.must("kubernetes", "kubeconfig", "lab", "--out", "-"); !strings.HasPrefix(stdout, "apiVersion: v1") {
		t.Fatalf("--out - printed %q", stdout)
	}
}

func TestKubeconfigRefusedForViewer(t *testing.T) {
	e := newKctlEnv(t)
	startFakeController(t, e)
	e.must("cert", "issue", "--role", "viewer", "--name", "alice")
	out := filepath.Join(e.dir, "lab.kubeconfig")
	if _, _, err := e.run("--context", "alice@lab", "kubernetes", "kubeconfig", "lab", "--out", out); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("viewer kubeconfig = %v, want forbidden", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused call wrote a file")
	}
}
