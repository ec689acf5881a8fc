package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneKeptLogs: a failed lab's logs dir keeps the newest maxKeptLogs
// failed labs' logs and removes the older ones.
func TestPruneKeptLogs(t *testing.T) {
	parent := t.TempDir()
	base := time.Now().Add(-time.Hour)
	for i := range maxKeptLogs + 5 {
		d := filepath.Join(parent, fmt.Sprintf("lab-%02d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		at := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
	}
	pruneKeptLogs(parent, maxKeptLogs)
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != maxKeptLogs || entries[0].Name() != "lab-05" {
		t.Fatalf("after pruning: %d dirs, first %q; want %d from lab-05", len(entries), entries[0].Name(), maxKeptLogs)
	}
}
