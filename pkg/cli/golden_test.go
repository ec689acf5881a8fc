package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites golden files instead of comparing: go test ./pkg/cli -update.
// Shared by every golden test in this package.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/NAME, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test ./pkg/cli -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s (run go test ./pkg/cli -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
