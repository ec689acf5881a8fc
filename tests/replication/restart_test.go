package replication

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/tests/harness"
)

// TestRestartAllKeepsState stops every replica and starts them again from
// their data dirs: the cluster elects a leader and holds the same state.
func TestRestartAllKeepsState(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "before", 40)
	mustApply(t, c, delItem(t, "before-007"))
	c.WaitCaughtUp()
	want := c.WaitConverged()

	for i := range c.Replicas() {
		c.Stop(i)
	}
	for i := range c.Replicas() {
		c.Restart(i)
	}
	c.WaitLeader()
	c.WaitCaughtUp()
	if got := c.WaitConverged(); !bytes.Equal(got, want) {
		t.Fatalf("state after restart differs:\n got %s\nwant %s", got, want)
	}
	// And the restarted cluster takes writes.
	writeItems(t, c, "after", 5)
	c.WaitCaughtUp()
	c.WaitConverged()
}

// TestRestartFromSnapshotAndLogTail makes the replicas snapshot and trim
// their logs, writes a tail after the snapshot, and restarts everything:
// each replica rebuilds its state from the snapshot plus the tail.
func TestRestartFromSnapshotAndLogTail(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3, SnapshotThreshold: 16, SnapshotInterval: 20 * time.Millisecond, TrailingLogs: 4})
	writeItems(t, c, "bulk", 80)
	c.WaitCaughtUp()
	c.Eventually(harness.DefaultTimeout, func() error {
		for _, r := range c.Running() {
			if idx, _ := strconv.ParseUint(r.Node().Stats()["last_snapshot_index"], 10, 64); idx == 0 {
				return fmt.Errorf("%s has no snapshot yet", r.ID)
			}
		}
		return nil
	})
	writeItems(t, c, "tail", 3)
	c.WaitCaughtUp()
	want := c.WaitConverged()

	for i := range c.Replicas() {
		c.Stop(i)
	}
	// The logs were compacted: a restart cannot replay from index 1 and
	// must load the snapshot, then the tail.
	for _, r := range c.Replicas() {
		first, err := raftnode.FirstLogIndex(r.DataDir)
		if err != nil {
			t.Fatal(err)
		}
		if first <= 1 {
			t.Fatalf("%s: log still starts at %d; no compaction happened", r.ID, first)
		}
	}
	for i := range c.Replicas() {
		c.Restart(i)
	}
	c.WaitLeader()
	c.WaitCaughtUp()
	if got := c.WaitConverged(); !bytes.Equal(got, want) {
		t.Fatalf("state after restart from snapshot differs:\n got %s\nwant %s", got, want)
	}
}
