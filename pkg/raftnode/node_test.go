package raftnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/store"
)

func testConfig(t *testing.T, id, dir string, bootstrap bool) Config {
	var logs bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	return Config{
		ID: id, DataDir: dir, RaftBind: "127.0.0.1:0", Bootstrap: bootstrap,
		FastTimeouts: true, RaftLogLevel: slog.LevelWarn,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

func waitLeaderCh(t *testing.T, ch <-chan bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case v := <-ch:
			if v {
				return
			}
		case <-timeout:
			t.Fatal("never became leader")
		}
	}
}

func put(t *testing.T, name, data string) store.Command {
	t.Helper()
	c, err := store.Put{Kind: "Node", Name: name, Data: json.RawMessage(data)}.Command()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSingleReplicaLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	n, err := Open(testConfig(t, "solo", dir, true))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	waitLeaderCh(t, n.LeaderCh())

	res, err := n.Apply(ctx, put(t, "a", `{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := n.State().Get("Node", "a")
	if !ok || o.ModifyIndex != res.Index {
		t.Fatalf("Get = %+v, %v", o, ok)
	}
	if _, err := time.Parse(time.RFC3339Nano, o.CreateTime); err != nil {
		t.Fatalf("leader did not stamp the time: %q", o.CreateTime)
	}
	cas, err := store.Put{Kind: "Node", Name: "a", Data: json.RawMessage(`2`), ExpectModifyIndex: store.Expect(0)}.Command()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Apply(ctx, cas); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("CAS apply = %v, want ErrConflict", err)
	}
	if err := n.VerifyLeader(ctx); err != nil {
		t.Fatal(err)
	}
	ms, err := n.Members(ctx)
	if err != nil || len(ms) != 1 || !ms[0].Leader || ms[0].Suffrage != "voter" || ms[0].Address != n.Addr() {
		t.Fatalf("Members = %+v, %v", ms, err)
	}
	if err := n.RemoveServer(ctx, "solo"); !errors.Is(err, ErrQuorumLoss) {
		t.Fatalf("remove last voter = %v, want ErrQuorumLoss", err)
	}
	var snap bytes.Buffer
	if _, err := n.Snapshot(ctx, &snap); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Snapshot(ctx, &bytes.Buffer{}); err != nil {
		t.Fatalf("second snapshot with nothing new: %v", err)
	}
	if !bytes.Equal(snap.Bytes(), n.State().Snapshot().Bytes()) {
		t.Fatal("user snapshot differs from the store's state")
	}
	want := n.State().Snapshot().Bytes()
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Apply(ctx, put(t, "b", `1`)); err == nil {
		t.Fatal("apply after shutdown succeeded")
	}

	// Reopening with Bootstrap again is a no-op on existing state.
	n2, err := Open(testConfig(t, "solo", dir, true))
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Shutdown()
	waitLeaderCh(t, n2.LeaderCh())
	if err := n2.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n2.State().Snapshot().Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("state after reopen:\n got %s\nwant %s", got, want)
	}
}

func TestFollowerWithoutClusterRefusesWrites(t *testing.T) {
	n, err := Open(testConfig(t, "lonely", t.TempDir(), false))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	ctx := context.Background()
	var nl *ErrNotLeader
	if _, err := n.Apply(ctx, put(t, "a", `1`)); !errors.As(err, &nl) || nl.LeaderID != "" {
		t.Fatalf("Apply = %v, want ErrNotLeader without a leader", err)
	}
	if err := n.AddVoter(ctx, "x", "127.0.0.1:1"); !errors.As(err, &nl) {
		t.Fatalf("AddVoter = %v, want ErrNotLeader", err)
	}
	if err := n.Restore(ctx, strings.NewReader("")); !errors.As(err, &nl) {
		t.Fatalf("Restore = %v, want ErrNotLeader", err)
	}
}

func TestOpenRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no id", Config{DataDir: t.TempDir(), RaftBind: "127.0.0.1:0"}, "id is required"},
		{"no data dir", Config{ID: "a", RaftBind: "127.0.0.1:0"}, "data dir is required"},
		{"no bind", Config{ID: "a", DataDir: t.TempDir()}, "bind address is required"},
		{"unspecified advertise", Config{ID: "a", DataDir: t.TempDir(), RaftBind: "0.0.0.0:0"}, "advertise address"},
		{"unspecified explicit advertise", Config{ID: "a", DataDir: t.TempDir(), RaftBind: "127.0.0.1:0", RaftAdvertise: "0.0.0.0:7001"}, "must name a host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Open(tt.cfg)
			if err == nil {
				n.Shutdown()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
