package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/kctlconfig"
)

// kctlEnv is a temp kctl config file (through $KCTL_CONFIG) and a temp
// directory for PKI output.
type kctlEnv struct {
	t      *testing.T
	dir    string
	config string
}

func newKctlEnv(t *testing.T) *kctlEnv {
	t.Helper()
	dir := t.TempDir()
	e := &kctlEnv{t: t, dir: dir, config: filepath.Join(dir, "home", ".kcore", "config")}
	t.Setenv(kctlconfig.EnvConfig, e.config)
	return e
}

// run runs kctl with args and returns stdout, stderr and the error.
func (e *kctlEnv) run(args ...string) (string, string, error) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), errOut.String(), err
}

// must runs kctl and fails the test on error.
func (e *kctlEnv) must(args ...string) string {
	e.t.Helper()
	out, errOut, err := e.run(args...)
	if err != nil {
		e.t.Fatalf("kctl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func (e *kctlEnv) load() *kctlconfig.Config {
	e.t.Helper()
	cfg, err := kctlconfig.Load(e.config)
	if err != nil {
		e.t.Fatal(err)
	}
	return cfg
}
