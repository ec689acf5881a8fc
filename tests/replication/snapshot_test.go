package replication

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/harness"
)

// TestSnapshotAndRestore takes a user snapshot, writes and deletes more,
// restores the snapshot through the leader and finds the snapshot's state
// on every replica; the cluster then takes writes again.
func TestSnapshotAndRestore(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "kept", 30)
	c.WaitCaughtUp()

	var snap bytes.Buffer
	idx, err := c.WaitLeader().Node().Snapshot(ctxT(t), &snap)
	if err != nil {
		t.Fatal(err)
	}
	if idx == 0 {
		t.Fatal("snapshot covers index 0")
	}
	want := objectsOf(mustState(t, snap.Bytes()), itemKind)

	writeItems(t, c, "lost", 20)
	mustApply(t, c, delItem(t, "kept-003"))
	c.WaitCaughtUp()

	if err := c.WaitLeader().Node().Restore(ctxT(t), bytes.NewReader(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	c.WaitCaughtUp()
	if got := c.WaitConverged(); !bytes.Equal(got, snap.Bytes()) {
		t.Fatalf("state after restore is not the snapshot:\n got %s\nwant %s", got, snap.Bytes())
	}
	for _, r := range c.Running() {
		if got := objectsOf(r.Node().State(), itemKind); !slices.Equal(got, want) {
			t.Errorf("%s: items after restore differ", r.ID)
		}
	}
	// kept-003 is back, so creating it conflicts; new writes land past
	// the restored snapshot.
	if _, err := c.Apply(ctxT(t), putItem(t, "kept-003", 0, store.Expect(0))); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("create restored item = %v, want ErrConflict", err)
	}
	res := mustApply(t, c, putItem(t, "after-restore", 0, store.Expect(0)))
	if res.Index <= idx {
		t.Fatalf("write after restore at index %d, not past the snapshot's %d", res.Index, idx)
	}
	c.WaitCaughtUp()
	c.WaitConverged()
}

// TestRestoreRefusesNewerSchema hands the leader a snapshot written by a
// newer schema: it is refused before it reaches raft and nothing changes.
func TestRestoreRefusesNewerSchema(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "a", 5)
	c.WaitCaughtUp()
	before := c.WaitConverged()

	newer := bytes.Replace(before, fmt.Appendf(nil, `"schema":%d`, version.Schema), fmt.Appendf(nil, `"schema":%d`, version.Schema+1), 1)
	err := c.WaitLeader().Node().Restore(ctxT(t), bytes.NewReader(newer))
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Restore = %v, want ErrSchemaTooNew", err)
	}
	damaged := before[:len(before)-10]
	if err := c.WaitLeader().Node().Restore(ctxT(t), bytes.NewReader(damaged)); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Restore of a truncated snapshot = %v, want ErrInvalid", err)
	}
	c.WaitCaughtUp()
	if got := c.WaitConverged(); !bytes.Equal(got, before) {
		t.Fatal("a refused restore changed the state")
	}
}

func mustState(t *testing.T, snap []byte) *store.State {
	t.Helper()
	s := store.New(nil)
	if err := s.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	return s
}
