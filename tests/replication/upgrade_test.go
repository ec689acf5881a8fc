package replication

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/harness"
)

// upgradeTrailingLogs is how many entries the leader keeps after a
// snapshot in TestRollingUpgradeKeepsOldReplicaFollowing: fewer than a
// stopped replica misses, so it catches up from the leader's snapshot.
const upgradeTrailingLogs = 16

// TestRollingUpgradeKeepsOldReplicaFollowing is a rolling upgrade from
// schema 2: r0 and r1 run this build, r2 still reads only schema 2 (as a
// replica of the previous release) and recorded so. The leader writes
// every entry in the JSON form of schema 2, so r2 applies each one, and
// stamps its snapshots schema 2, so r2 restores the one it is sent after
// missing entries. Once r2 is upgraded and records version.Schema, the
// next entries are binary, without restarting the leader.
func TestRollingUpgradeKeepsOldReplicaFollowing(t *testing.T) {
	var oldReads atomic.Int64 // what r2 reads; 0 once upgraded
	oldReads.Store(store.MinWriteSchema)
	c := harness.New(t, harness.Options{Replicas: 3, TrailingLogs: upgradeTrailingLogs, Hooks: harness.Hooks{
		Configure: func(r *harness.Replica, cfg *raftnode.Config) {
			// The bolt log drops the entries a snapshot covers at once
			// (the WAL only whole segments), so r2 must be sent one.
			cfg.LogStore = raftnode.LogStoreBolt
			if r.ID == "r2" {
				cfg.ReadSchema = int(oldReads.Load())
			}
		},
	}})
	// The Member records the cluster held before the upgrade, in an entry
	// of schema 2 as the previous release's leader wrote it.
	seed := recordMembers(t, c, map[string]int{"r0": version.Schema, "r1": version.Schema, "r2": store.MinWriteSchema})
	seed.Schema = store.MinWriteSchema
	mustApply(t, c, seed)

	first := writeItems(t, c, "a", 20)
	c.WaitCaughtUp()
	sameItems(t, c, 20)
	wantForm(t, c, first-19, first, '{', store.MinWriteSchema)
	c.WaitConverged()

	c.Stop(2)
	writeItems(t, c, "b", 3*upgradeTrailingLogs)
	var snap bytes.Buffer
	if _, err := c.WaitLeader().Node().Snapshot(ctxT(t), &snap); err != nil {
		t.Fatal(err)
	}
	if h, err := store.ReadSnapshotHeader(&snap); err != nil || h.Schema != store.MinWriteSchema {
		t.Fatalf("leader's snapshot header %+v (%v), want schema %d", h, err, store.MinWriteSchema)
	}
	c.Restart(2)
	c.Eventually(harness.DefaultTimeout, func() error {
		if idx, _ := strconv.ParseUint(c.Replica(2).Node().Stats()["last_snapshot_index"], 10, 64); idx == 0 {
			return errors.New("r2 has not restored the leader's snapshot")
		}
		return nil
	})
	c.WaitCaughtUp()
	sameItems(t, c, 20+3*upgradeTrailingLogs)
	c.WaitConverged()

	// r2 is upgraded and records the schema it now reads: that record is
	// still written for a schema 2 member, the writes after it are binary.
	c.Stop(2)
	oldReads.Store(0)
	c.Restart(2)
	upgraded := recordMembers(t, c, map[string]int{"r2": version.Schema})
	idx := mustApply(t, c, upgraded).Index
	wantForm(t, c, idx, idx, '{', store.MinWriteSchema)
	last := writeItems(t, c, "c", 5)
	wantForm(t, c, last-4, last, 0x01, version.Schema)
	c.WaitCaughtUp()
	c.WaitConverged()
	if got := c.WaitLeader().Node().State().Snapshot().Header().Schema; got != version.Schema {
		t.Fatalf("snapshot schema after the upgrade %d, want %d", got, version.Schema)
	}
}

// sameItems checks that r2 holds the n items the leader holds.
func sameItems(t *testing.T, c *harness.Cluster, n int) {
	t.Helper()
	got, want := objectsOf(c.Replica(2).Node().State(), itemKind), objectsOf(c.WaitLeader().Node().State(), itemKind)
	if !slices.Equal(got, want) || len(want) != n {
		t.Fatalf("r2 holds %d items, the leader %d, want %d", len(got), len(want), n)
	}
}

// recordMembers is a batch that records each replica's Member object with
// the schema it reads.
func recordMembers(t *testing.T, c *harness.Cluster, schemas map[string]int) store.Command {
	t.Helper()
	var b store.Batch
	for _, r := range c.Replicas() {
		s, ok := schemas[r.ID]
		if !ok {
			continue
		}
		data, err := json.Marshal(apiv1.MemberData{RaftAddr: r.Addr, Schema: s})
		if err != nil {
			t.Fatal(err)
		}
		b.Ops = append(b.Ops, store.Op{Put: &store.Put{Kind: apiv1.KindMember, Name: r.ID, Data: data}})
	}
	cmd, err := b.Command()
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// wantForm checks the raw bytes of the leader's log entries lo to hi: each
// starts with first (the form: '{' JSON, 0x01 binary) and decodes to a
// command of schema.
func wantForm(t *testing.T, c *harness.Cluster, lo, hi uint64, first byte, schema int) {
	t.Helper()
	n := c.WaitLeader().Node()
	for i := lo; i <= hi; i++ {
		l, err := n.LogEntry(i)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := store.DecodeCommand(l.Data)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if len(l.Data) == 0 || l.Data[0] != first || cmd.Schema != schema {
			t.Fatalf("entry %d: schema %d, starts %s; want schema %d, starting %q", i, cmd.Schema, preview(l.Data), schema, first)
		}
	}
}

func preview(b []byte) string {
	return fmt.Sprintf("%q", b[:min(len(b), 16)])
}

// TestUnrecordedServerCountsAsOldest: a server of the raft configuration
// without a Member object (a voter just added, before its record) may run
// an older release, so the leader writes the oldest schema it writes until
// the server records one; removing it lifts that at once.
func TestUnrecordedServerCountsAsOldest(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 2})
	mustApply(t, c, recordMembers(t, c, map[string]int{"r0": version.Schema, "r1": version.Schema}))
	idx := writeItems(t, c, "a", 1)
	wantForm(t, c, idx, idx, 0x01, version.Schema)

	c.Add()
	idx = writeItems(t, c, "b", 1)
	wantForm(t, c, idx, idx, '{', store.MinWriteSchema)

	mustApply(t, c, recordMembers(t, c, map[string]int{"r2": version.Schema}))
	idx = writeItems(t, c, "c", 1)
	wantForm(t, c, idx, idx, 0x01, version.Schema)

	mustApply(t, c, recordMembers(t, c, map[string]int{"r2": store.MinWriteSchema}))
	idx = writeItems(t, c, "d", 1)
	wantForm(t, c, idx, idx, '{', store.MinWriteSchema)
	if c.WaitLeader().ID == "r2" {
		t.Skip("r2 leads; the removal below needs another leader")
	}
	c.Remove(2)
	idx = writeItems(t, c, "e", 1)
	wantForm(t, c, idx, idx, 0x01, version.Schema)
	c.WaitCaughtUp()
	c.WaitConverged()
}
