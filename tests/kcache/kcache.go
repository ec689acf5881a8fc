// Package kcache finds, for the tests that run them, the binaries and files
// the build scripts put in the kcore cache ($KCORE_CACHE, else
// ~/.cache/kcore): what scripts/build-*.sh link under bin/current.
package kcache

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir is the kcore cache: $KCORE_CACHE, else ~/.cache/kcore.
func Dir() (string, error) {
	if c := os.Getenv("KCORE_CACHE"); c != "" {
		return c, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "kcore"), nil
}

// Tool is the path in $env, else bin/current/name in the cache. When there
// is nothing there it skips t, or fails it when requiredEnv is set (make
// test sets it after building); target is the make target that builds it.
func Tool(t testing.TB, env, name, requiredEnv, target string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		cache, err := Dir()
		if err != nil {
			t.Fatal(err)
		}
		p = filepath.Join(cache, "bin", "current", name)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(requiredEnv) != "" {
			t.Fatalf("%s is set but there is no %s at %s (run %s): %v", requiredEnv, name, p, target, err)
		}
		t.Skipf("SKIP: no %s at %s; build it with %s (make test does, and sets %s)", name, p, target, requiredEnv)
	}
	return p
}
