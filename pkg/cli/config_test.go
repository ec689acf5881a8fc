package cli

import (
	"errors"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/kctlconfig"
)

func writeContexts(t *testing.T, e *kctlEnv) {
	t.Helper()
	cfg := kctlconfig.New()
	for _, x := range []kctlconfig.Context{
		{Name: "lab", Controllers: []string{"https://10.0.0.1:7443", "https://10.0.0.2:7443"}, Role: "cluster-admin", User: "admin"},
		{Name: "alice@lab", Controllers: []string{"https://10.0.0.1:7443"}, Role: "viewer", User: "alice"},
	} {
		x.SetCredentials(kctlconfig.Credentials{CA: []byte("ca"), Cert: []byte("cert"), Key: []byte("key")})
		cfg.Set(x)
	}
	cfg.CurrentContext = "lab"
	if err := cfg.Save(e.config); err != nil {
		t.Fatal(err)
	}
}

func TestConfigContexts(t *testing.T) {
	e := newKctlEnv(t)
	writeContexts(t, e)
	golden(t, "ctl/get-contexts.txt", []byte(e.must("config", "get-contexts")))

	if got := e.must("config", "current-context"); got != "lab\n" {
		t.Fatalf("current-context = %q", got)
	}
	for _, args := range [][]string{
		{"--context", "alice@lab", "config", "current-context"},
		{"config", "current-context", "--context", "alice@lab"},
	} {
		if got := e.must(args...); got != "alice@lab\n" {
			t.Fatalf("%v = %q", args, got)
		}
	}
	e.must("config", "use-context", "alice@lab")
	if got := e.load().CurrentContext; got != "alice@lab" {
		t.Fatalf("use-context left current %q", got)
	}
	if _, _, err := e.run("config", "use-context", "nope"); !errors.Is(err, kctlconfig.ErrContextNotFound) {
		t.Fatalf("use-context nope = %v", err)
	}
	e.must("config", "delete-context", "alice@lab")
	if _, _, err := e.run("config", "current-context"); !errors.Is(err, kctlconfig.ErrNoCurrentContext) {
		t.Fatalf("current-context after delete = %v", err)
	}
}

func TestConfigFlagOverridesEnv(t *testing.T) {
	e := newKctlEnv(t)
	other := newKctlEnv(t) // sets KCTL_CONFIG to its own file, which stays empty
	writeContexts(t, e)
	if got := other.must("--config", e.config, "config", "current-context"); got != "lab\n" {
		t.Fatalf("--config: %q", got)
	}
	_, _, err := other.run("config", "current-context")
	if !errors.Is(err, kctlconfig.ErrNoCurrentContext) || !strings.Contains(err.Error(), "kctl controller init") {
		t.Fatalf("empty config: %v", err)
	}
}

func TestRestoreNeedsTerminalOrYes(t *testing.T) {
	e := newKctlEnv(t)
	e.must("controller", "init", "--name", "lab", "--controller", closedAddrForTest(t), "--out", e.dir+"/pki")
	snap := e.dir + "/snap"
	if err := writeFile(snap, "x"); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.run("controller", "snapshot", "restore", snap)
	if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(err.Error(), "--yes") {
		t.Fatalf("restore without a terminal = %v", err)
	}
}
