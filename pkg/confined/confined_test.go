package confined

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture is a confined directory with symlinks that lead outside it, and
// the outside directory that must stay empty.
func fixture(t *testing.T) (*Dir, string, string) {
	t.Helper()
	root, outside := t.TempDir(), t.TempDir()
	for _, dir := range []string{"etc/kubernetes", "etc/real"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"etc/out":                 outside,                              // absolute, outside
		"etc/kubernetes/rel":      "../../../" + filepath.Base(outside), // relative, outside
		"etc/inside":              "real",                               // relative, inside
		"etc/kubernetes/file.lnk": filepath.Join(outside, "secret"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, root, outside
}

// escapes are names every operation must refuse with ErrEscape.
var escapes = []string{
	"../x",
	"etc/../../x",
	"/etc/kubernetes/x",
	"etc/out/x",
	"etc/out/new/x",
	"etc/kubernetes/rel/secret",
	"etc/inside/x",
	"etc/kubernetes/file.lnk",
	"etc/kubernetes/\x00",
	"",
}

// TestEveryOperationRefusesEscapes runs each operation on each escaping
// name and checks it fails with ErrEscape and changes nothing outside.
func TestEveryOperationRefusesEscapes(t *testing.T) {
	d, _, outside := fixture(t)
	ops := map[string]func(name string) error{
		"MkdirAll": func(n string) error { return d.MkdirAll(n, 0o755) },
		"OpenFile": func(n string) error {
			f, err := d.OpenFile(n)
			if err == nil {
				f.Close()
			}
			return err
		},
		"ReadFile":  func(n string) error { _, err := d.ReadFile(n, 1<<20); return err },
		"WriteFile": func(n string) error { _, err := d.WriteFile(n, strings.NewReader("x"), 0o644); return err },
		"Remove":    func(n string) error { return d.Remove(n) },
		"Readlink":  func(n string) error { _, err := d.Readlink(n); return err },
		"Sub": func(n string) error {
			s, err := d.Sub(n, true, 0o755)
			if err == nil {
				s.Close()
			}
			return err
		},
	}
	for op, fn := range ops {
		for _, name := range escapes {
			if (op == "Remove" || op == "WriteFile") && name == "etc/kubernetes/file.lnk" {
				continue // the link itself is removed or replaced, never followed: tested below
			}
			if err := fn(name); !errors.Is(err, ErrEscape) {
				t.Errorf("%s(%q) = %v, want ErrEscape", op, name, err)
			}
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside holds %d entries after the escapes, want only its own file", len(entries))
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret")); string(got) != "outside" {
		t.Fatalf("the outside file holds %q", got)
	}
}

// TestRemoveLinkNotTarget removes a symlink by name: the link goes, its
// target outside stays.
func TestRemoveLinkNotTarget(t *testing.T) {
	d, root, outside := fixture(t)
	if err := d.Remove("etc/kubernetes/file.lnk"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/kubernetes/file.lnk")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Fatalf("the link's target went: %v", err)
	}
	if err := d.Remove("etc/missing/dir/x"); err != nil {
		t.Fatalf("remove under a missing directory = %v, want nil", err)
	}
}

// TestWriteFileReplaces writes a file twice under new directories, with its
// mode set on the file, and leaves no temporary file behind.
func TestWriteFileReplaces(t *testing.T) {
	d, root, _ := fixture(t)
	for _, content := range []string{"one", "two"} {
		n, err := d.WriteFile("etc/kubernetes/pki/a/ca.key", strings.NewReader(content), 0o600)
		if err != nil || n != int64(len(content)) {
			t.Fatalf("WriteFile = %d, %v", n, err)
		}
	}
	p := filepath.Join(root, "etc/kubernetes/pki/a/ca.key")
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stat = %v, %v; want mode 0600", st, err)
	}
	if got, err := d.ReadFile("etc/kubernetes/pki/a/ca.key", 3); err != nil || string(got) != "two" {
		t.Fatalf("ReadFile at its limit = %q, %v", got, err)
	}
	if _, err := d.ReadFile("etc/kubernetes/pki/a/ca.key", 2); err == nil {
		t.Fatal("ReadFile over its limit succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the file", len(entries))
	}
}

// TestWriteOverLinkReplacesLink writes over a name that is a symlink to a
// file outside: the link is replaced by a file, the target is unchanged.
func TestWriteOverLinkReplacesLink(t *testing.T) {
	d, root, outside := fixture(t)
	if _, err := d.WriteFile("etc/kubernetes/file.lnk", strings.NewReader("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(root, "etc/kubernetes/file.lnk")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("lstat = %v, %v; want a regular file", st, err)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "secret")); string(got) != "outside" {
		t.Fatalf("the link's target holds %q", got)
	}
}

// TestOpenFileRefusesNonRegular refuses a directory and a FIFO (which
// would block a plain open).
func TestOpenFileRefusesNonRegular(t *testing.T) {
	d, root, _ := fixture(t)
	if err := mkfifo(filepath.Join(root, "etc/kubernetes/fifo")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etc/kubernetes", "etc/kubernetes/fifo"} {
		if f, err := d.OpenFile(name); err == nil {
			f.Close()
			t.Errorf("OpenFile(%q) succeeded, want refused", name)
		}
	}
}

func mkfifo(p string) error { return unix.Mkfifo(p, 0o600) }

// TestRetriedStopsAtMaxRetries retries a lookup the kernel asks to retry
// MaxRetries times and no more.
func TestRetriedStopsAtMaxRetries(t *testing.T) {
	for _, fails := range []int{MaxRetries - 1, MaxRetries} {
		calls := 0
		fd, err := retried(func() (int, error) {
			calls++
			if calls <= fails {
				return -1, unix.EAGAIN
			}
			return 7, nil
		})
		switch {
		case fails < MaxRetries && (err != nil || fd != 7 || calls != fails+1):
			t.Errorf("%d failures: fd %d, %v after %d calls; want success", fails, fd, err, calls)
		case fails == MaxRetries && (!errors.Is(err, unix.EAGAIN) || calls != MaxRetries):
			t.Errorf("%d failures: %v after %d calls; want EAGAIN after %d", fails, err, calls, MaxRetries)
		}
	}
}

// TestReadlinkReadsOneNameUpToItsBound returns a link's stored target, at
// exactly MaxLinkBytes, and refuses one a byte longer.
func TestReadlinkReadsOneNameUpToItsBound(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{MaxLinkBytes, MaxLinkBytes + 1} {
		target := "/" + strings.Repeat("x", n-1)
		name := fmt.Sprintf("link-%d", n)
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		d, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Readlink(name)
		d.Close()
		if n <= MaxLinkBytes && (err != nil || got != target) {
			t.Fatalf("readlink of a %d-byte target: %q, %v", n, got, err)
		}
		if n > MaxLinkBytes && err == nil {
			t.Fatalf("readlink of a %d-byte target passed its bound", n)
		}
	}
}

// TestProcPathNamesTheHandle: a file created by path beneath ProcPath lands
// in the handle's directory, even after the directory's path was taken by
// another directory.
func TestProcPathNamesTheHandle(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := os.Rename(dir, filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.ProcPath(), "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "moved", "f")); err != nil {
		t.Fatalf("not in the handle's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("in the directory now at the old path: %v", err)
	}
}
