package replication

import (
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// withRequest gives cmd a caller and request id, as the API server does for
// a write that carries one.
func withRequest(cmd store.Command, caller, id string) store.Command {
	cmd.Caller, cmd.RequestID = caller, id
	return cmd
}

// TestRequestAppliesOnceAcrossLeaders replays a log that mixes schema 1
// entries (as older builds wrote them) with entries carrying request ids,
// then sends one request again through a new leader, after the old one
// stopped, and through a replica that was restarted from a snapshot: every
// replica answers the repeat with the first result and applies nothing.
func TestRequestAppliesOnceAcrossLeaders(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3, SnapshotThreshold: 8, TrailingLogs: 4})
	old := putItem(t, "old", 0, nil)
	old.Schema = 1
	mustApply(t, c, old)

	create := withRequest(putItem(t, "once", 1, store.Expect(0)), "cluster-admin/alice", "00000000000000000000000000000001")
	first := mustApply(t, c, create)
	if first.Err != nil || first.Replayed {
		t.Fatalf("first apply = %+v", first)
	}
	writeItems(t, c, "fill", 20)
	c.WaitCaughtUp()

	l := c.WaitLeader()
	c.Stop(l.Index)
	again := mustApply(t, c, create)
	if again.Err != nil || !again.Replayed || again.Index != first.Index {
		t.Fatalf("repeat through the new leader = %+v, want replayed index %d", again, first.Index)
	}
	c.Restart(l.Index)
	c.WaitCaughtUp()
	for _, r := range c.Running() {
		st := r.Node().State()
		o, ok := st.Get(itemKind, "once")
		if !ok || o.CreateIndex != first.Index || o.ModifyIndex != first.Index {
			t.Errorf("%s: once = %+v, %v; want written only at %d", r.ID, o, ok, first.Index)
		}
		if res, ok := st.Recent(create.Caller, create.RequestID); !ok || res.Index != first.Index {
			t.Errorf("%s: remembers %+v, %v", r.ID, res, ok)
		}
		if _, ok := st.Get(itemKind, "old"); !ok {
			t.Errorf("%s: schema 1 entry not applied", r.ID)
		}
	}
	c.WaitConverged()
}
