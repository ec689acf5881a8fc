package proccluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BinEnv names an already built kcore-controller to use instead of
// building one (e.g. bin/kcore-controller after make build).
const BinEnv = "KCORE_CONTROLLER_BIN"

// builtBinary is the kcore-controller built at most once per test binary.
// It is package state on purpose: a build takes seconds and a test
// binary's tests share one; Main removes it when they are done.
var builtBinary struct {
	mu    sync.Mutex
	tried bool
	path  string
	err   error
}

// build runs `go build` of cmd/kcore-controller into a new temporary
// directory (argv, no shell) and returns the binary's path.
func build() (string, error) {
	dir, err := os.MkdirTemp("", "kcore-proccluster-")
	if err != nil {
		return "", fmt.Errorf("build kcore-controller: %w", err)
	}
	bin := filepath.Join(dir, "kcore-controller")
	out, err := exec.Command("go", "build", "-o", bin, "kcore.dev/kcore/cmd/kcore-controller").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build kcore-controller: %w\n%s", err, out)
	}
	return bin, nil
}

// binary returns BinEnv's binary, or the one built for this test binary.
func binary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv(BinEnv); bin != "" {
		return bin
	}
	builtBinary.mu.Lock()
	defer builtBinary.mu.Unlock()
	if !builtBinary.tried {
		builtBinary.tried = true
		builtBinary.path, builtBinary.err = build()
	}
	if builtBinary.err != nil {
		t.Fatal(builtBinary.err)
	}
	return builtBinary.path
}

// Main runs the tests and then removes the binary built for them, if one
// was: call it from TestMain as os.Exit(proccluster.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	builtBinary.mu.Lock()
	defer builtBinary.mu.Unlock()
	if builtBinary.path != "" {
		os.RemoveAll(filepath.Dir(builtBinary.path))
	}
	return code
}
