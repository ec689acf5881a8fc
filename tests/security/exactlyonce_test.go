package security

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// Shape of the exactly-once write stream.
const (
	onceWriters   = 16
	oncePerWriter = 60
	// onceKillEvery is how many more acknowledged writes the stream makes
	// before each leader kill (and again after it, before the restart).
	onceKillEvery = 120
	onceKind      = "OnceItem"
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
// three replicas, each writing its own objects (every other write
// create-only), and stops the leader abruptly twice mid-stream: its API
// listener and every connection to it close and raft shuts down while
// writes are in flight. The clients retry writes whose answer was lost.
// On every replica: every acknowledged write is there at the index its
// caller was told, no object was written twice (each name is written by one
// logical call, so a second application moves its ModifyIndex and adds a
// second audit entry), and no create-only write was answered "exists" for
// its own earlier attempt.
func TestWritesApplyExactlyOnceAcrossLeaderKills(t *testing.T) {
	e := newEnv(t, 3)
	var acked atomic.Int64
	writes := make([][]onceWrite, onceWriters)
	var wg sync.WaitGroup
	for w := range onceWriters {
		cl := e.goClient(fmt.Sprintf("writer-%02d", w), w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range oncePerWriter {
				ow := onceWrite{name: fmt.Sprintf("w%02d-%03d", w, i), createOnly: i%2 == 1}
				var cas *uint64
				if ow.createOnly {
					cas = new(uint64)
				}
				ctx, cancel := context.WithTimeout(context.Background(), harness.DefaultTimeout)
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
		e.waitAcked(&acked, int64((2*kill+1)*onceKillEvery))
		l := e.c.WaitLeader()
		e.c.Stop(l.Index)
		t.Logf("kill %d: stopped leader %s after %d acknowledged writes", kill+1, l.ID, acked.Load())
		e.waitAcked(&acked, int64((2*kill+2)*onceKillEvery))
		e.c.Restart(l.Index)
		e.c.WaitCaughtUp()
	}
	wg.Wait()
	e.c.WaitCaughtUp()
	e.checkExactlyOnce(writes)
}

// checkExactlyOnce checks every running replica's state against what the
// writers were told.
func (e *env) checkExactlyOnce(writes [][]onceWrite) {
	t := e.t
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
	for _, r := range e.c.Running() {
		st := r.Node().State()
		var lost, twice int
		applied := map[string]int{}
		for _, o := range st.List(apiv1.KindAudit) {
			var a apiv1.AuditEntry
			if err := json.Unmarshal(o.Data, &a); err != nil {
				t.Fatalf("%s: audit entry %s: %v", r.ID, o.Name, err)
			}
			if a.Result == 200 && a.Method == "PUT" {
				applied[a.Object]++
			}
		}
		for _, o := range st.List(onceKind) {
			if o.CreateIndex != o.ModifyIndex || applied[onceKind+"/"+o.Name] > 1 {
				twice++
				t.Errorf("%s: %s applied twice (create %d, modify %d, %d audit entries)",
					r.ID, o.Name, o.CreateIndex, o.ModifyIndex, applied[onceKind+"/"+o.Name])
			}
		}
		for _, ws := range writes {
			for _, w := range ws {
				if !w.acked {
					continue
				}
				o, ok := st.Get(onceKind, w.name)
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
	if ackedN == 0 {
		t.Fatal("no write was acknowledged")
	}
}

// waitAcked polls until at least n writes are acknowledged.
func (e *env) waitAcked(acked *atomic.Int64, n int64) {
	e.t.Helper()
	e.c.Eventually(2*harness.DefaultTimeout, func() error {
		if got := acked.Load(); got < n {
			return fmt.Errorf("%d of %d writes acknowledged", got, n)
		}
		return nil
	})
}

// goClient returns a pkg/client Client for a cluster-admin named name that
// knows every replica, starting with a different one for each rot so the
// writers reach the leader both directly and through followers.
func (e *env) goClient(name string, rot int) *client.Client {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: name, Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	rs := e.c.Replicas()
	var addrs []string
	for i := range rs {
		addrs = append(addrs, apiserve.Of(rs[(i+rot)%len(rs)]).Addr)
	}
	cl, err := client.New(client.Config{
		Addresses:    addrs,
		CA:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: e.ca.Cert().Raw}),
		Cert:         kp.CertPEM,
		Key:          kp.KeyPEM,
		Timeout:      10 * time.Second,
		ElectionWait: harness.DefaultTimeout,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cl.Close)
	return cl
}
