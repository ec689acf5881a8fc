package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/pkg/version"
)

// replicaFiles are what a replica keeps across a restart.
type replicaFiles struct {
	dataDir, pkiDir, httpAddr, raftAddr string
}

// countRecords counts a replica's LogRecordedMember messages.
type countRecords struct{ n *atomic.Int64 }

func (h countRecords) Enabled(context.Context, slog.Level) bool { return true }

func (h countRecords) Handle(_ context.Context, r slog.Record) error {
	if r.Message == LogRecordedMember {
		h.n.Add(1)
	}
	return nil
}

func (h countRecords) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h countRecords) WithGroup(string) slog.Handler { return h }

// startReplica starts a replica on loopback, reporting schema (0: this
// build's), and closes it when the test ends.
func startReplica(t *testing.T, cfg Config, schema int) *Controller {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	cfg.FastTimeouts, cfg.reportSchema = true, schema
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// restartReplica closes c and starts it again on its data dir and
// addresses, as the documented restart does: neither --bootstrap nor
// --join, reporting schema.
func restartReplica(t *testing.T, c *Controller, schema int, log *slog.Logger) *Controller {
	t.Helper()
	f := replicaFiles{dataDir: c.cfg.DataDir, pkiDir: c.cfg.PKIDir, httpAddr: c.HTTPAddr(), raftAddr: c.RaftAddr()}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	return startReplica(t, Config{DataDir: f.dataDir, PKIDir: f.pkiDir, Listen: f.httpAddr, RaftListen: f.raftAddr, Logger: log}, schema)
}

// recordedSchema is the schema the leader's state records for id.
func recordedSchema(leader *Controller, id string) int {
	var m apiv1.MemberData
	o, ok := leader.Node().State().Get(apiv1.KindMember, id)
	if !ok || json.Unmarshal(o.Data, &m) != nil {
		return 0
	}
	return m.Schema
}

// writtenSchema writes an object through the leader's API and returns the
// schema of the log entry it was written in.
func writtenSchema(t *testing.T, admin *http.Client, leader *Controller, name string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "https://"+leader.HTTPAddr()+apiv1.ObjectPath("Note", name), jsonBody(`{"n":1}`))
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var wr apiv1.WriteResponse
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&wr) != nil {
		t.Fatalf("write %s: status %d", name, resp.StatusCode)
	}
	l, err := leader.Node().LogEntry(wr.Index)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := store.DecodeCommand(l.Data)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.Schema
}

// TestRestartedFollowerRecordsItsSchema is a rolling upgrade of the
// followers of a three-replica cluster (real raft and API over TLS, ids the
// replicas' addresses, as by default): both followers joined reporting
// schema 2 (an older build), so the leader writes schema 2 entries. Each
// is restarted the documented way (neither --bootstrap nor --join) on this
// build: its Member object records the new schema while it still follows,
// and once both do the leader writes version.Schema, with no leader
// change.
func TestRestartedFollowerRecordsItsSchema(t *testing.T) {
	ca, key := testPKI(t)
	old := store.MinWriteSchema
	leader := startReplica(t, Config{DataDir: t.TempDir(), PKIDir: writePKI(t, ca, key), Bootstrap: true}, 0)
	admin := adminClient(t, ca)
	poll(t, func() error {
		if recordedSchema(leader, leader.Node().ID()) != version.Schema {
			return fmt.Errorf("the bootstrapped leader has not recorded itself")
		}
		return nil
	})
	followers := make([]*Controller, 2)
	for i := range followers {
		followers[i] = startReplica(t, Config{DataDir: t.TempDir(), PKIDir: writePKI(t, ca, key), Join: []string{leader.HTTPAddr()}}, old)
	}
	poll(t, func() error {
		for _, f := range followers {
			if got := recordedSchema(leader, f.Node().ID()); got != old {
				return fmt.Errorf("%s records schema %d, want %d", f.Node().ID(), got, old)
			}
		}
		return nil
	})
	if !leader.Node().IsLeader() {
		t.Fatal("the bootstrapped replica lost leadership while the others joined")
	}
	term := leader.Node().Raft().CurrentTerm()
	if got := writtenSchema(t, admin, leader, "before"); got != old {
		t.Fatalf("with followers of schema %d the leader writes schema %d", old, got)
	}

	for i, f := range followers {
		id := f.Node().ID()
		var logged atomic.Int64
		f = restartReplica(t, f, 0, slog.New(countRecords{&logged}))
		followers[i] = f
		poll(t, func() error {
			if !leader.Node().IsLeader() || leader.Node().Raft().CurrentTerm() != term {
				t.Fatalf("leadership changed while %s restarted: the test needs the record made by a follower", id)
			}
			if got := recordedSchema(leader, id); got != version.Schema {
				return fmt.Errorf("restarted follower %s still records schema %d, want %d", id, got, version.Schema)
			}
			return nil
		})
		if f.Node().IsLeader() {
			t.Fatalf("%s leads: its record does not show a follower recording itself", id)
		}
		poll(t, func() error {
			if n := logged.Load(); n != 1 {
				return fmt.Errorf("%s logged %q %d times, want once", id, LogRecordedMember, n)
			}
			return nil
		})
		want := old
		if i == len(followers)-1 {
			want = version.Schema
		}
		if got := writtenSchema(t, admin, leader, fmt.Sprintf("after-%d", i)); got != want {
			t.Fatalf("after restarting %d of %d followers the leader writes schema %d, want %d", i+1, len(followers), got, want)
		}
	}
	if leader.Node().Raft().CurrentTerm() != term {
		t.Fatal("the leader's term changed during the upgrade")
	}
}
