package replication

import (
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// TestBlockingQueryOnFollowerWakesOnReplicatedWrite waits on a follower
// for an object and for its kind; a write through the leader wakes both
// with the write's index.
func TestBlockingQueryOnFollowerWakesOnReplicatedWrite(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "x", 2)
	c.WaitCaughtUp()
	leader := c.WaitLeader()
	var follower *harness.Replica
	for _, r := range c.Running() {
		if r.ID != leader.ID {
			follower = r
			break
		}
	}
	st := follower.Node().State()
	objAfter, kindAfter := st.KeyIndex(itemKind, "x-001"), st.KeyIndex(itemKind, "")
	type woke struct{ obj, kind uint64 }
	done := make(chan woke, 1)
	go func() {
		obj, _ := st.Wait(ctxT(t), itemKind, "x-001", objAfter)
		kind, _ := st.Wait(ctxT(t), itemKind, "", kindAfter)
		done <- woke{obj, kind}
	}()
	res := mustApply(t, c, putItem(t, "x-001", 7, store.Expect(objAfter)))
	got := <-done
	if got.obj != res.Index || got.kind < res.Index {
		t.Fatalf("follower woke at object %d, kind %d; write was at %d", got.obj, got.kind, res.Index)
	}
}
