package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// TestAcknowledgedWritesSurviveLeaderLoss writes from several goroutines,
// stops the leader in the middle and keeps writing. Every write is a
// create-if-absent, so a retry after an unknown outcome either creates the
// item or proves (by conflicting) that the earlier attempt committed. At the
// end every acknowledged item is on every survivor, written exactly once.
func TestAcknowledgedWritesSurviveLeaderLoss(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	const writers, perWriter, stopAfter = 4, 60, 80

	var acked atomic.Int64
	ackedIDs := make([][]string, writers)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%03d", w, i)
				if err := writeOnce(t, c, id, w); err != nil {
					errs <- fmt.Errorf("write %s: %w", id, err)
					return
				}
				ackedIDs[w] = append(ackedIDs[w], id)
				acked.Add(1)
			}
		}()
	}

	if err := harness.Poll(harness.DefaultTimeout, func() error {
		if n := acked.Load(); n < stopAfter {
			return fmt.Errorf("%d writes acknowledged", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	old := c.Leader()
	if old == nil {
		t.Fatal("no leader mid-stream")
	}
	c.Stop(old.Index)
	t.Logf("stopped leader %s after %d acknowledged writes", old.ID, acked.Load())

	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.WaitLeader().ID == old.ID {
		t.Fatal("stopped replica is still leader")
	}
	c.WaitCaughtUp()

	want := map[string]int{}
	for w, ids := range ackedIDs {
		for _, id := range ids {
			want[id] = w
		}
	}
	if len(want) != writers*perWriter {
		t.Fatalf("%d distinct acknowledged ids, want %d", len(want), writers*perWriter)
	}
	for _, r := range c.Running() {
		st := r.Node().State()
		objs := st.List(itemKind)
		if len(objs) != len(want) {
			t.Errorf("%s holds %d items, want %d", r.ID, len(objs), len(want))
		}
		creates := map[uint64]string{}
		for _, o := range objs {
			var it item
			if err := json.Unmarshal(o.Data, &it); err != nil || it.ID != o.Name {
				t.Errorf("%s: item %s holds %s", r.ID, o.Name, o.Data)
			}
			if o.CreateIndex != o.ModifyIndex {
				t.Errorf("%s: item %s written more than once (create %d, modify %d)", r.ID, o.Name, o.CreateIndex, o.ModifyIndex)
			}
			if prev, dup := creates[o.CreateIndex]; dup {
				t.Errorf("%s: items %s and %s share index %d", r.ID, prev, o.Name, o.CreateIndex)
			}
			creates[o.CreateIndex] = o.Name
		}
		for id, w := range want {
			o, ok := st.Get(itemKind, id)
			if !ok {
				t.Errorf("%s: acknowledged item %s missing", r.ID, id)
				continue
			}
			var it item
			if err := json.Unmarshal(o.Data, &it); err != nil || it.Writer != w {
				t.Errorf("%s: item %s from writer %d, want %d", r.ID, id, it.Writer, w)
			}
		}
	}
	c.WaitConverged()
}

// writeOnce creates item id, retrying through leader changes until the
// outcome is known: created now, or created by an earlier attempt whose
// answer was lost (the retry then conflicts).
func writeOnce(t *testing.T, c *harness.Cluster, id string, writer int) error {
	cmd := putItem(t, id, writer, store.Expect(0))
	deadline := time.Now().Add(harness.DefaultTimeout)
	retried := false
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Apply(ctx, cmd)
		cancel()
		switch {
		case err == nil:
			return nil
		case retried && errors.Is(err, store.ErrConflict):
			return nil
		case errors.Is(err, store.ErrConflict):
			return err
		}
		retried = true
	}
	return errors.New("no answer before the deadline")
}
