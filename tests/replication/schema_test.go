package replication

import (
	"errors"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/harness"
)

// TestNewerSchemaEntryIsRefusedEverywhere replicates an entry stamped with
// a newer schema than this build reads: every replica refuses it with
// ErrSchemaTooNew and keeps its state, then goes on applying entries it can
// read.
func TestNewerSchemaEntryIsRefusedEverywhere(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "a", 3)
	c.WaitCaughtUp()
	before := objectsOf(c.WaitLeader().Node().State(), itemKind)

	cmd := putItem(t, "a-001", 9, nil)
	cmd.Schema = version.Schema + 1
	res, err := c.Apply(ctxT(t), cmd)
	if !errors.Is(err, store.ErrSchemaTooNew) || !errors.Is(res.Err, store.ErrSchemaTooNew) {
		t.Fatalf("apply newer schema = %v (result %v), want ErrSchemaTooNew", err, res.Err)
	}
	c.WaitCaughtUp()
	for _, r := range c.Running() {
		st := r.Node().State()
		if st.LastIndex() < res.Index {
			t.Errorf("%s has not processed the entry at %d", r.ID, res.Index)
		}
		if got := objectsOf(st, itemKind); !slices.Equal(got, before) {
			t.Errorf("%s: state changed by a refused entry:\n got %q\nwant %q", r.ID, got, before)
		}
	}

	ignorable := store.Command{Type: "from-the-future", Schema: version.Schema, Ignorable: true}
	if _, err := c.Apply(ctxT(t), ignorable); err != nil {
		t.Fatalf("ignorable unknown command: %v", err)
	}
	unknown := store.Command{Type: "from-the-future", Schema: version.Schema}
	if _, err := c.Apply(ctxT(t), unknown); !errors.Is(err, store.ErrUnknownCommand) {
		t.Fatalf("unknown command = %v, want ErrUnknownCommand", err)
	}
	writeItems(t, c, "b", 2)
	c.WaitCaughtUp()
	c.WaitConverged()
}
