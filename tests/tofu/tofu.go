// Package tofu drives OpenTofu against the kcore provider built from this
// checkout, for the Terraform tests of in-process controllers
// (tests/terraform) and of the lab (tests/e2e): it finds the tofu the
// Makefile builds, builds the provider, installs it through a dev override
// and runs tofu commands with a bound on each.
package tofu

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/tests/kcache"
)

// Binary is the tofu to run: $KCORE_TOFU, else bin/current/tofu in the
// kcore cache ($KCORE_CACHE, else ~/.cache/kcore), where
// scripts/build-tofu.sh puts it. Without one it skips t, or fails it when
// KCORE_TOFU_REQUIRED is set (make test sets it).
func Binary(t *testing.T) string {
	t.Helper()
	return kcache.Tool(t, "KCORE_TOFU", "tofu", "KCORE_TOFU_REQUIRED", "make tofu")
}

// Options are the bounds of a Dir.
type Options struct {
	// Repo is the checkout cmd/terraform-provider-kcore is built from.
	Repo string
	// BuildTimeout bounds building the provider.
	BuildTimeout time.Duration
	// CommandTimeout bounds one tofu command.
	CommandTimeout time.Duration
}

// Dir is a tofu working directory whose CLI configuration installs the
// provider built from the checkout through a dev override.
type Dir struct {
	t   *testing.T
	bin string
	o   Options
	// Path is the working directory (a test temporary directory).
	Path string
	// Env is the environment of every command: the CLI configuration,
	// automation settings, a HOME of its own and PATH; callers add their
	// TF_VAR_ values.
	Env []string
}

// New builds the provider into a new working directory and writes the CLI
// configuration that installs it; it skips t without tofu (Binary).
func New(t *testing.T, o Options) *Dir {
	t.Helper()
	d := &Dir{t: t, bin: Binary(t), o: o, Path: t.TempDir()}
	plugins := filepath.Join(d.Path, "plugins")
	for _, dir := range []string{plugins, filepath.Join(d.Path, "home")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), o.BuildTimeout)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(plugins, "terraform-provider-kcore"), "./cmd/terraform-provider-kcore")
	build.Dir = o.Repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	cli := "provider_installation {\n  dev_overrides {\n    \"kcore/kcore\" = " + strconv.Quote(plugins) + "\n  }\n  direct {}\n}\n"
	if err := os.WriteFile(filepath.Join(d.Path, "tofurc"), []byte(cli), 0o600); err != nil {
		t.Fatal(err)
	}
	d.Env = []string{
		"TF_CLI_CONFIG_FILE=" + filepath.Join(d.Path, "tofurc"),
		"TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1",
		"HOME=" + filepath.Join(d.Path, "home"), "PATH=" + os.Getenv("PATH"),
	}
	return d
}

// Run runs tofu with args (-no-color added but to state commands) in the
// working directory and returns its combined output and exit code; a
// command that cannot run fails the test.
func (d *Dir) Run(args ...string) (string, int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), d.o.CommandTimeout)
	defer cancel()
	if args[0] != "state" {
		args = append(args[:1:1], append([]string{"-no-color"}, args[1:]...)...)
	}
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Dir, cmd.Env = d.Path, d.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		d.t.Fatalf("tofu %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), 0
}

// Must runs tofu and fails the test unless it exits 0.
func (d *Dir) Must(args ...string) string {
	d.t.Helper()
	out, code := d.Run(args...)
	if code != 0 {
		d.t.Fatalf("tofu %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// Output runs tofu with args and returns its standard output alone (for
// -json), failing the test unless it exits 0.
func (d *Dir) Output(args ...string) []byte {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(d.t.Context(), d.o.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Dir, cmd.Env = d.Path, d.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		d.t.Fatalf("tofu %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}
