package etcdsnap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/confined"
)

// TestNodeBackupsScheduleAndRetention runs the passes of a node's backup
// loop over a fake clock: a backup when due and none before, files other
// clusters and crashed writes left alone or swept, keep and maxAge applied
// with the controller's retention, and a failed snapshot dropping nothing.
func TestNodeBackupsScheduleAndRetention(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "backups")
	db := etcdDB(t, 5, true)
	sum := sha256.Sum256(db)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var fail error
	takes := 0
	n := &NodeBackups{
		Root: openRoot(t, base), Dir: "backups", Cluster: "lab", Interval: time.Hour, Keep: 3, MaxAge: 150 * time.Minute,
		Now: func() time.Time { return now },
		Take: func(_ context.Context, verifyDir string) (*Snapshot, error) {
			takes++
			if !sameDir(t, verifyDir, dir) {
				t.Errorf("verified in %s, not in the backup directory", verifyDir)
			}
			if fail != nil {
				return nil, fail
			}
			return &Snapshot{Data: db, SHA256: hex.EncodeToString(sum[:]), Revision: 5}, nil
		},
	}
	ctx := context.Background()
	took, _, err := n.Pass(ctx)
	if err != nil || took == nil || took.Name != "etcd-lab-20261201T100000Z.db" {
		t.Fatalf("first pass took %+v, %v", took, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, took.Name)); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != int64(len(db)) {
		t.Fatalf("backup file %v %v", fi, err)
	}
	if sha, err := exec.LookPath("sha256sum"); err == nil {
		c := exec.Command(sha, "-c", took.Name+".sha256")
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("sha256sum -c: %v\n%s", err, out)
		}
	}
	// Another cluster's backup, a crashed write and a stray file.
	for _, f := range []string{"etcd-lab-2-20261201T090000Z.db", ".etcd-lab-20261201T095000Z.db.tmp-123", ".etcd-lab-2-20261201T095000Z.db.tmp-123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(59 * time.Minute)
	if took, _, err := n.Pass(ctx); err != nil || took != nil {
		t.Fatalf("pass before the interval took %+v, %v", took, err)
	}
	if d, err := n.NextDue(); err != nil || d != time.Minute {
		t.Fatalf("next due in %s, %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".etcd-lab-20261201T095000Z.db.tmp-123")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("crashed write not swept: %v", err)
	}
	for i := range 3 {
		now = now.Add(time.Hour)
		if took, _, err := n.Pass(ctx); err != nil || took == nil {
			t.Fatalf("pass %d took %+v, %v", i, took, err)
		}
	}
	list, err := n.List()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, b.Name)
		if b.SHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("%s checksum %q", b.Name, b.SHA256)
		}
	}
	want := []string{"etcd-lab-20261201T115900Z.db", "etcd-lab-20261201T125900Z.db", "etcd-lab-20261201T135900Z.db"}
	if !slices.Equal(names, want) {
		t.Fatalf("kept %v, want %v (keep 3)", names, want)
	}
	for _, f := range []string{"etcd-lab-2-20261201T090000Z.db", ".etcd-lab-2-20261201T095000Z.db.tmp-123", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s not left alone: %v", f, err)
		}
	}

	// Failing snapshots keep everything but what ages out, and never the newest.
	fail = errors.New("etcd down")
	now = now.Add(10 * time.Hour)
	if took, dropped, err := n.Pass(ctx); err == nil || took != nil || dropped != nil {
		t.Fatalf("failed pass took %+v dropped %v err %v", took, dropped, err)
	}
	if list, _ := n.List(); len(list) != 3 {
		t.Fatalf("a failed snapshot dropped backups: %v", list)
	}
	fail = nil
	took, dropped, err := n.Pass(ctx)
	if err != nil || took == nil || len(dropped) != 3 {
		t.Fatalf("pass after the outage took %+v dropped %v err %v (maxAge)", took, dropped, err)
	}
	if _, err := os.Stat(filepath.Join(dir, want[0]+".sha256")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dropped backup's checksum file kept: %v", err)
	}
}

// TestNodeBackupsRefusesAnEmptyMember keeps no backup of a member that
// holds no key yet (revision 0): retention would count it as a backup.
func TestNodeBackupsRefusesAnEmptyMember(t *testing.T) {
	db := etcdDB(t, 0, true)
	sum := sha256.Sum256(db)
	n := &NodeBackups{Root: openRoot(t, t.TempDir()), Dir: "etcd", Cluster: "lab", Interval: time.Hour, Keep: 1,
		Take: func(context.Context, string) (*Snapshot, error) {
			return &Snapshot{Data: db, SHA256: hex.EncodeToString(sum[:])}, nil
		}}
	if _, _, err := n.Pass(context.Background()); !errors.Is(err, ErrEmpty) {
		t.Fatalf("Pass = %v, want ErrEmpty", err)
	}
	if list, _ := n.List(); len(list) != 0 {
		t.Fatalf("kept %v", list)
	}
}

// TestNodeBackupsRefusesAMismatchedSnapshot keeps nothing when the data does
// not match the checksum the taker computed.
func TestNodeBackupsRefusesAMismatchedSnapshot(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "etcd")
	n := &NodeBackups{Root: openRoot(t, base), Dir: "etcd", Cluster: "lab", Interval: time.Hour, Keep: 1,
		Take: func(context.Context, string) (*Snapshot, error) {
			return &Snapshot{Data: []byte("db"), SHA256: "00", Revision: 1}, nil
		}}
	if _, _, err := n.Pass(context.Background()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Pass = %v, want ErrInvalid", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("files left: %v", entries)
	}
}

// TestNodeBackupsFollowNoSymlink: a symlink anywhere beneath the root, the
// backup directory's own components included, is never followed: no
// backup is written through it, none listed or dropped through it, and a
// checksum file that links elsewhere is not read.
func TestNodeBackupsFollowNoSymlink(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	db := etcdDB(t, 5, true)
	sum := sha256.Sum256(db)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	take := func(context.Context, string) (*Snapshot, error) {
		return &Snapshot{Data: db, SHA256: hex.EncodeToString(sum[:]), Revision: 5}, nil
	}
	if err := os.Symlink(elsewhere, filepath.Join(base, "kcore")); err != nil {
		t.Fatal(err)
	}
	n := &NodeBackups{Root: openRoot(t, base), Dir: "kcore/etcd", Cluster: "lab", Interval: time.Hour, Keep: 1,
		Now: func() time.Time { return now }, Take: take}
	if _, _, err := n.Pass(context.Background()); !errors.Is(err, confined.ErrEscape) {
		t.Fatalf("Pass through a symlinked directory = %v, want ErrEscape", err)
	}
	if _, err := n.List(); !errors.Is(err, confined.ErrEscape) {
		t.Fatalf("List through a symlinked directory = %v, want ErrEscape", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("written through the symlink: %v", entries)
	}

	// A checksum file planted as a link to a secret is not read.
	secret := filepath.Join(elsewhere, "secret")
	if err := os.WriteFile(secret, []byte("s3cret rest"), 0o600); err != nil {
		t.Fatal(err)
	}
	n.Dir = "etcd"
	took, _, err := n.Pass(context.Background())
	if err != nil || took == nil {
		t.Fatalf("Pass = %+v, %v", took, err)
	}
	sumFile := filepath.Join(base, "etcd", took.Name+".sha256")
	if err := os.Remove(sumFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, sumFile); err != nil {
		t.Fatal(err)
	}
	list, err := n.List()
	if err != nil || len(list) != 1 || list[0].SHA256 != "" {
		t.Fatalf("List = %+v, %v; want the backup without a checksum", list, err)
	}
	// Retention removes the link itself, never its target.
	now = now.Add(time.Hour)
	if _, dropped, err := n.Pass(context.Background()); err != nil || len(dropped) != 1 {
		t.Fatalf("Pass dropped %v, %v", dropped, err)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "s3cret rest" {
		t.Fatalf("the link's target changed: %q %v", data, err)
	}
}

// openRoot opens dir as the backups' confinement root for the test.
func openRoot(t *testing.T, dir string) *confined.Dir {
	t.Helper()
	d, err := confined.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// sameDir says whether paths a and b name the same directory.
func sameDir(t *testing.T, a, b string) bool {
	t.Helper()
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
