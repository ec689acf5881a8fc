package etcdsnap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

func TestFilesPathStaysInDir(t *testing.T) {
	f := &Files{Dir: t.TempDir()}
	for _, name := range []string{"lab", "lab/", "/x", "../x/y", "lab/..", "lab/a/b", "lab/.", "lab/a\\b", "lab/a\x00"} {
		if p, err := f.Path(name); err == nil {
			t.Errorf("Path(%q) = %s, want refused", name, p)
		}
	}
	p, err := f.Path("lab/20261130T000000Z-scheduled")
	if err != nil || p != filepath.Join(f.Dir, "lab", "20261130T000000Z-scheduled.snap") {
		t.Fatalf("Path = %s, %v", p, err)
	}
}

// TestFilesSealAndVerify: a file is sealed for its own name, leaves no
// temporary file behind, refuses tampering and a file moved to another
// name, and KeepFile reads it back before anything is recorded.
func TestFilesSealAndVerify(t *testing.T) {
	kr := keyring(t)
	f := &Files{Dir: t.TempDir(), Sealer: kr}
	raw := etcdDB(t, 3, true)
	sum := sha256.Sum256(raw)
	snap := &Snapshot{Data: raw, Member: "cp1", SHA256: hex.EncodeToString(sum[:]), Revision: 3}
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	info, put, err := KeepFile(f, "r0", "lab", snap, ReasonScheduled, now)
	if err != nil {
		t.Fatal(err)
	}
	if put.Put == nil || strings.Contains(string(put.Put.Data), "ciphertext") || info.Replicas[0] != "r0" {
		t.Fatalf("record %s, info %+v", put.Put.Data, info)
	}
	entries, _ := os.ReadDir(filepath.Join(f.Dir, "lab"))
	if len(entries) != 1 {
		t.Fatalf("files in the cluster's directory: %v, want only the snapshot", entries)
	}
	sealed, err := f.ReadSealed(info.Name)
	if err != nil || strings.Contains(string(sealed), "hunter2") {
		t.Fatalf("sealed file: %v (in clear: %v)", err, strings.Contains(string(sealed), "hunter2"))
	}
	if err := f.WriteSealed("lab/20261130T000000Z-other", sealed); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a file written under another name = %v, want ErrInvalid", err)
	}
	tampered := []byte(strings.Replace(string(sealed), `"ciphertext":"`, `"ciphertext":"AAAA`, 1))
	if err := f.WriteSealed(info.Name, tampered); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a tampered file = %v, want ErrInvalid", err)
	}

	st := store.New(nil)
	applyOps(t, st, 1, []store.Op{put})
	got, gz, err := OpenWith(f, kr, st, info.Name)
	if err != nil || got.SHA256 != snap.SHA256 {
		t.Fatal(err)
	}
	if back, _ := Decompress(gz); string(back) != string(raw) {
		t.Fatal("the file does not open to the snapshot")
	}
	if _, _, err := OpenWith(&Files{Dir: t.TempDir(), Sealer: kr}, kr, st, info.Name); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("open on a replica without the file = %v, want ErrNotLocal", err)
	}
	if _, _, err := OpenWith(nil, kr, st, info.Name); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("open without files = %v, want ErrNotLocal", err)
	}

	// A snapshot that is not an etcd database is refused before any record.
	bad := &Snapshot{Data: []byte("not bbolt"), SHA256: "x"}
	if _, _, err := KeepFile(f, "r0", "lab", bad, "manual", now.Add(time.Minute)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("KeepFile of garbage = %v, want ErrInvalid", err)
	}
	if names, _ := f.Names(); len(names) != 1 {
		t.Fatalf("files after a refused snapshot: %v", names)
	}

	// Sweep removes a file once its record is gone and SweepGrace passed.
	applyOps(t, st, 2, DropOps(st, []apiv1.EtcdSnapshotInfo{info}))
	if removed, _ := f.Sweep(st, time.Now().Add(SweepGrace-time.Minute)); len(removed) != 0 {
		t.Fatalf("swept %v within the grace", removed)
	}
	if removed, _ := f.Sweep(st, time.Now().Add(SweepGrace+time.Minute)); len(removed) != 1 {
		t.Fatalf("swept %v after the grace, want the orphan", removed)
	}
}

func TestDueAndExpired(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	at := func(h int, reason string) apiv1.EtcdSnapshotInfo {
		return apiv1.EtcdSnapshotInfo{Name: Name("lab", t0.Add(time.Duration(h)*time.Hour), reason), TakenAt: t0.Add(time.Duration(h) * time.Hour).Format(time.RFC3339), Reason: reason}
	}
	if !Due(nil, time.Hour, t0) {
		t.Error("no backup yet is not due")
	}
	list := []apiv1.EtcdSnapshotInfo{at(0, ReasonScheduled), at(1, ReasonManual)}
	if Due(list, time.Hour, t0.Add(time.Hour-time.Second)) || !Due(list, time.Hour, t0.Add(time.Hour)) {
		t.Error("due is not at exactly the interval after the last scheduled backup")
	}
	five := []apiv1.EtcdSnapshotInfo{at(0, ReasonScheduled), at(1, ReasonScheduled), at(2, ReasonScheduled), at(3, ReasonScheduled), at(4, ReasonScheduled)}
	if got := Expired(five, 5, 0, t0.Add(100*time.Hour)); len(got) != 0 {
		t.Errorf("keep at the count dropped %d", len(got))
	}
	if got := Expired(five, 4, 0, t0); len(got) != 1 || got[0].Name != five[0].Name {
		t.Errorf("keep one under the count dropped %v", got)
	}
	now := t0.Add(4 * time.Hour)
	if got := Expired(five, 5, 4*time.Hour, now); len(got) != 0 {
		t.Errorf("a backup exactly maxAge old was dropped: %v", got)
	}
	if got := Expired(five, 5, 4*time.Hour-time.Second, now); len(got) != 1 || got[0].Name != five[0].Name {
		t.Errorf("a backup a second over maxAge: dropped %v", got)
	}
	if got := Expired(five, 5, time.Hour, t0.Add(100*time.Hour)); len(got) != 4 {
		t.Errorf("all too old: dropped %d, want all but the newest", len(got))
	}
}
