package security

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/tests/proccluster"
)

// Shape of the exactly-once write stream.
const (
	onceWriters   = 16
	oncePerWriter = 60
	// onceKillEvery is how many more acknowledged writes the stream makes
	// before each leader kill (and again after it, before the restart).
	onceKillEvery = 120
	onceKind      = "OnceItem"
	// onceAuditLimit is above every audit entry the stream can leave (one
	// per attempt that reached a leader), so the check sees them all.
	onceAuditLimit = 100 * onceWriters * oncePerWriter
)

// onceWrite is one logical write of the stream and what its caller saw.
type onceWrite struct {
	name       string
	createOnly bool
	acked      bool
	index      uint64
	conflict   bool
	err        error
}

// TestWritesApplyExactlyOnceAcrossLeaderKills runs 16 Go clients against
// three kcore-controller processes, each writing its own objects (every
// other write create-only), and SIGKILLs the leader process twice
// mid-stream, restarting it between the kills so quorum holds. The clients
// retry writes whose answer was lost. Read back from every replica's own
// state (stale reads of each process alone): every acknowledged write is
// there at the index its caller was told, no object was written twice
// (each name is written by one logical call, so a second application moves
// its ModifyIndex and adds a second audit entry), and no create-only write
// was answered "exists" for its own earlier attempt.
func TestWritesApplyExactlyOnceAcrossLeaderKills(t *testing.T) {
	c := proccluster.New(t, proccluster.Options{})
	var acked atomic.Int64
	writes := make([][]onceWrite, onceWriters)
	var wg sync.WaitGroup
	for w := range onceWriters {
		cl := c.NewClient(c.ClientConfig(apiv1.RoleClusterAdmin, fmt.Sprintf("writer-%02d", w), rotated(c, w)...))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range oncePerWriter {
				ow := onceWrite{name: fmt.Sprintf("w%02d-%03d", w, i), createOnly: i%2 == 1}
				var cas *uint64
				if ow.createOnly {
					cas = new(uint64)
				}
				ctx, cancel := context.WithTimeout(context.Background(), proccluster.DefaultTimeout)
				ow.index, ow.err = cl.Put(ctx, onceKind, ow.name, map[string]any{"writer": w, "seq": i}, cas)
				cancel()
				ow.acked = ow.err == nil
				ow.conflict = errors.Is(ow.err, client.ErrConflict)
				if ow.acked {
					acked.Add(1)
				}
				writes[w] = append(writes[w], ow)
			}
		}()
	}

	for kill := range 2 {
		waitAcked(c, &acked, int64((2*kill+1)*onceKillEvery))
		l := c.Leader()
		c.Kill(l.Index)
		t.Logf("kill %d: SIGKILLed leader %s after %d acknowledged writes", kill+1, l.ID, acked.Load())
		waitAcked(c, &acked, int64((2*kill+2)*onceKillEvery))
		c.Restart(l.Index)
		c.WaitCaughtUp()
	}
	wg.Wait()
	c.WaitCaughtUp()
	checkExactlyOnce(t, c, writes)
}

// rotated returns every replica's API address starting with replica rot
// (mod the replica count), so writers reach the leader both directly and
// through followers.
func rotated(c *proccluster.Cluster, rot int) []string {
	rs := c.Replicas()
	addrs := make([]string, len(rs))
	for i := range rs {
		addrs[i] = rs[(i+rot)%len(rs)].API
	}
	return addrs
}

// waitAcked polls until at least n writes are acknowledged.
func waitAcked(c *proccluster.Cluster, acked *atomic.Int64, n int64) {
	c.Eventually(2*proccluster.DefaultTimeout, func() error {
		if got := acked.Load(); got < n {
			return fmt.Errorf("%d of %d writes acknowledged", got, n)
		}
		return nil
	})
}

// checkExactlyOnce checks every replica's own state, read through its API
// alone with stale reads, against what the writers were told.
func checkExactlyOnce(t *testing.T, c *proccluster.Cluster, writes [][]onceWrite) {
	t.Helper()
	var ackedN, unknown, falseConflicts int
	for _, ws := range writes {
		for _, w := range ws {
			switch {
			case w.acked:
				ackedN++
			case w.conflict:
				falseConflicts++
				t.Errorf("create-only %s answered %v for its own write", w.name, w.err)
			default:
				unknown++
				t.Logf("write %s failed with an unknown outcome: %v", w.name, w.err)
			}
		}
	}
	if ackedN == 0 {
		t.Fatal("no write was acknowledged")
	}
	for _, r := range c.Replicas() {
		objs, applied := replicaState(t, c, r)
		var lost, twice int
		for name, o := range objs {
			if o.CreateIndex != o.ModifyIndex || applied[onceKind+"/"+name] > 1 {
				twice++
				t.Errorf("%s: %s applied twice (create %d, modify %d, %d audit entries)",
					r.ID, name, o.CreateIndex, o.ModifyIndex, applied[onceKind+"/"+name])
			}
		}
		for _, ws := range writes {
			for _, w := range ws {
				if !w.acked {
					continue
				}
				o, ok := objs[w.name]
				switch {
				case !ok:
					lost++
					t.Errorf("%s: acknowledged write %s (index %d) lost", r.ID, w.name, w.index)
				case o.ModifyIndex != w.index:
					t.Errorf("%s: %s is at index %d, its writer was told %d", r.ID, w.name, o.ModifyIndex, w.index)
				}
			}
		}
		t.Logf("%s: %d acknowledged, %d unknown outcome, %d lost, %d applied twice, %d false conflicts",
			r.ID, ackedN, unknown, lost, twice, falseConflicts)
	}
}

// replicaState returns replica r's own OnceItem objects by name and how
// many successful PUTs its audit log holds for each "kind/name".
func replicaState(t *testing.T, c *proccluster.Cluster, r *proccluster.Replica) (map[string]apiv1.Object, map[string]int) {
	t.Helper()
	rc := c.ReplicaClient(r.Index, apiv1.RoleClusterAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), proccluster.DefaultTimeout)
	defer cancel()
	list, _, err := rc.ListWith(ctx, onceKind, client.ReadOptions{Stale: true})
	if err != nil {
		t.Fatalf("%s: list %s: %v", r.ID, onceKind, err)
	}
	entries, err := rc.Audit(ctx, client.AuditQuery{Object: onceKind, Limit: onceAuditLimit, Stale: true})
	if err != nil {
		t.Fatalf("%s: audit: %v", r.ID, err)
	}
	objs := map[string]apiv1.Object{}
	for _, o := range list.Items {
		objs[o.Name] = o
	}
	applied := map[string]int{}
	for _, a := range entries {
		if a.Result == 200 && a.Method == "PUT" {
			applied[a.Object]++
		}
	}
	return objs, applied
}
