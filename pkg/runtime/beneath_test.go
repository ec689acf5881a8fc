package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/execrun"
)

// linkOut replaces the directory rel beneath root by a symlink to a fresh
// directory outside the root, and returns that directory.
func linkOut(t *testing.T, root, rel string) string {
	t.Helper()
	outside := t.TempDir()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p); err != nil {
		t.Fatal(err)
	}
	return outside
}

func assertNothingIn(t *testing.T, dir string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("wrote %d entries outside the root", len(entries))
	}
}

// TestSystemdUnitDirSymlinkRefused: with the unit directory swapped for a
// symlink out of the root, Ensure fails and writes nothing there.
func TestSystemdUnitDirSymlinkRefused(t *testing.T) {
	root := t.TempDir()
	outside := linkOut(t, root, unitDirRel)
	s := &Systemd{Root: root, Runner: execrun.NewRecorder()}
	if _, err := s.Ensure(context.Background(), etcdUnit()); !errors.Is(err, confined.ErrEscape) {
		t.Fatalf("Ensure = %v, want ErrEscape", err)
	}
	assertNothingIn(t, outside)
}

// TestSupervisorLogSymlinkRefused: a unit's log directory, or its log file,
// swapped for a symlink out of the root is not appended to.
func TestSupervisorLogSymlinkRefused(t *testing.T) {
	root := t.TempDir()
	s := newTestSupervisor(t, root)
	outside := linkOut(t, root, logDirRel)
	if _, err := appendBeneath(root, s.logRel("u"), 0o640); !errors.Is(err, confined.ErrEscape) {
		t.Fatalf("open log through a linked directory = %v, want ErrEscape", err)
	}
	if err := os.Remove(filepath.Join(root, logDirRel)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, logDirRel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "shadow"), filepath.Join(root, s.logRel("u"))); err != nil {
		t.Fatal(err)
	}
	if _, err := appendBeneath(root, s.logRel("u"), 0o640); !errors.Is(err, confined.ErrEscape) {
		t.Fatalf("open a linked log = %v, want ErrEscape", err)
	}
	assertNothingIn(t, outside)
}

// TestOwnFileReadAtItsCap reads a file of exactly MaxOwnFileBytes and
// refuses one a byte longer.
func TestOwnFileReadAtItsCap(t *testing.T) {
	root := t.TempDir()
	for _, extra := range []int{0, 1} {
		if err := writeBeneath(root, unitRel("u"), make([]byte, MaxOwnFileBytes+extra), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readBeneath(root, unitRel("u")); (err != nil) != (extra == 1) {
			t.Errorf("file %d bytes past the cap: %v", extra, err)
		}
	}
}
