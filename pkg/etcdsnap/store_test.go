package etcdsnap

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

func keyring(t *testing.T) *secrets.Keyring {
	t.Helper()
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func applyOps(t *testing.T, st *store.State, index uint64, ops []store.Op) {
	t.Helper()
	cmd, err := store.Batch{Ops: ops}.Command()
	if err != nil {
		t.Fatal(err)
	}
	if res := st.Apply(index, cmd); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestName(t *testing.T) {
	at := time.Date(2026, 11, 30, 1, 2, 3, 0, time.FixedZone("x", 3600))
	tests := []struct{ reason, want string }{
		{"manual", "lab/20261130T000203Z-manual"},
		{"before ClusterUpdate u1", "lab/20261130T000203Z-before-clusterupdate-u1"},
		{"  ", "lab/20261130T000203Z-manual"},
		{"a very long reason that goes on and on and on and on", "lab/20261130T000203Z-a-very-long-reason-that-goes-on-and-on-a"},
	}
	for _, tt := range tests {
		if got := Name("lab", at, tt.reason); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.reason, got, tt.want)
		}
	}
	if got := FullName("lab", "20261130T000203Z-manual"); got != "lab/20261130T000203Z-manual" {
		t.Errorf("FullName = %q", got)
	}
	if got := FullName("lab", "lab/x"); got != "lab/x" {
		t.Errorf("FullName = %q", got)
	}
}

// TestOpsSealAndRetention stores seven snapshots of one cluster and one of
// another: the content is never in the store in clear, the newest five of
// "lab" are kept, the other cluster's is untouched, Open gives the content
// back only with the right key.
func TestOpsSealAndRetention(t *testing.T) {
	kr := keyring(t)
	st := store.New(nil)
	raw := etcdDB(t, 3, true)
	sum := sha256.Sum256(raw)
	snap := &Snapshot{Data: raw, Member: "cp1", SHA256: hex.EncodeToString(sum[:]), Revision: 3}
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	index := uint64(1)
	var names []string
	for i := range 7 {
		info, ops, err := Ops(kr, st, "lab", snap, "manual", start.Add(time.Duration(i)*time.Minute), 0)
		if err != nil {
			t.Fatal(err)
		}
		if info.SizeBytes != int64(len(raw)) || info.Revision != 3 || info.StoredBytes == 0 || info.Member != "cp1" {
			t.Fatalf("info %+v", info)
		}
		applyOps(t, st, index, ops)
		index++
		names = append(names, info.Name)
	}
	_, ops, err := Ops(kr, st, "other", snap, "", start, 0)
	if err != nil {
		t.Fatal(err)
	}
	applyOps(t, st, index, ops)

	list, err := List(st, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != DefaultKeep || list[0].Name != names[2] || list[4].Name != names[6] {
		t.Fatalf("kept %d snapshots from %s, want the newest %d (%s…%s)", len(list), list[0].Name, DefaultKeep, names[2], names[6])
	}
	if other, _ := List(st, "other"); len(other) != 1 || other[0].Reason != ReasonManual {
		t.Fatalf("other cluster's snapshots %+v", other)
	}
	for _, o := range st.List(apiv1.KindEtcdSnapshot) {
		if bytes.Contains(o.Data, []byte("hunter2")) {
			t.Errorf("%s holds the snapshot in clear", o.Name)
		}
	}

	info, gz, err := Open(kr, st, names[6])
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decompress(gz)
	if err != nil || !bytes.Equal(got, raw) || info.SHA256 != snap.SHA256 {
		t.Fatalf("Open gave %d bytes (%v), want the snapshot", len(got), err)
	}
	if _, _, err := Open(keyring(t), st, names[6]); err == nil {
		t.Fatal("Open with another key succeeded")
	}
	if _, _, err := Open(kr, st, names[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open of a dropped snapshot = %v, want ErrNotFound", err)
	}
	if _, err := Lookup(st, names[6]); err != nil {
		t.Fatal(err)
	}
	// Taking the same snapshot name twice is refused by the create-only put.
	_, ops, err = Ops(kr, st, "lab", snap, "manual", start.Add(6*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := store.Batch{Ops: ops}.Command()
	if res := st.Apply(index+1, cmd); !errors.Is(res.Err, store.ErrConflict) {
		t.Fatalf("a second snapshot under one name = %v, want a conflict", res.Err)
	}
}
