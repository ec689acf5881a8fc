package etcdsnap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// TestCopyMissing: a replica copies the files it lacks from the holder,
// byte for byte, leaves alone the ones it holds and those kept in raft,
// reports a fetch that fails, and never keeps a copy that does not open to
// the recorded snapshot.
func TestCopyMissing(t *testing.T) {
	kr := keyring(t)
	holder := &Files{Dir: t.TempDir(), Sealer: kr}
	raw := etcdDB(t, 3, true)
	sum := sha256.Sum256(raw)
	snap := &Snapshot{Data: raw, Member: "cp1", SHA256: hex.EncodeToString(sum[:]), Revision: 3}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	info, put, err := KeepFile(holder, "r0", "lab", snap, ReasonScheduled, now)
	if err != nil {
		t.Fatal(err)
	}
	st := store.New(nil)
	applyOps(t, st, 1, []store.Op{put})
	_, inRaft, err := Ops(kr, st, "lab", snap, ReasonManual, now.Add(time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	applyOps(t, st, 2, inRaft[:1])
	held, err := holder.ReadSealed(info.Name)
	if err != nil {
		t.Fatal(err)
	}

	var asked []string
	fromHolder := func(_ context.Context, name string, replicas []string) ([]byte, error) {
		asked = append(asked, name)
		if len(replicas) != 1 || replicas[0] != "r0" {
			t.Errorf("asked %v, want the record's holder r0 first", replicas)
		}
		return holder.ReadSealed(name)
	}
	mine := &Files{Dir: t.TempDir(), Sealer: kr}
	copied, err := CopyMissing(context.Background(), mine, fromHolder, st)
	if err != nil || len(copied) != 1 || copied[0] != info.Name {
		t.Fatalf("copied %v (%v), want %s", copied, err, info.Name)
	}
	if got, err := mine.ReadSealed(info.Name); err != nil || string(got) != string(held) {
		t.Fatalf("the copy differs from the holder's file (%v)", err)
	}
	asked = nil
	if copied, err := CopyMissing(context.Background(), mine, fromHolder, st); err != nil || len(copied) != 0 || len(asked) != 0 {
		t.Fatalf("second pass copied %v, asked %v (%v): the file is here already", copied, asked, err)
	}

	down := func(context.Context, string, []string) ([]byte, error) { return nil, errors.New("no replica answers") }
	other := &Files{Dir: t.TempDir(), Sealer: kr}
	if copied, err := CopyMissing(context.Background(), other, down, st); err == nil || len(copied) != 0 {
		t.Fatalf("copy with every replica down = %v, %v; want an error", copied, err)
	}

	// A file sealed under the right name that is not the recorded snapshot
	// (another database) is removed again.
	otherDB, err := compress(etcdDB(t, 5, true))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := kr.Seal(apiv1.KindEtcdSnapshot, info.Name, otherDB)
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := json.Marshal(sealed)
	impostor := func(context.Context, string, []string) ([]byte, error) { return wrong, nil }
	if err := KeepFetched(context.Background(), other, impostor, info); !errors.Is(err, ErrInvalid) {
		t.Fatalf("keep a copy of another database = %v, want ErrInvalid", err)
	}
	if _, err := other.ReadSealed(info.Name); !errors.Is(err, ErrNotLocal) {
		t.Fatalf("the bad copy was kept: %v", err)
	}
}
