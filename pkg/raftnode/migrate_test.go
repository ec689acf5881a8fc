package raftnode

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// oldDataDir is a data dir written by the bolt log store with JSON
// commands (schema 2): puts, a delete, a batch with an audit entry and a
// request id, a CAS put and an audit append. want-state.jsonl beside it is
// the store's snapshot after those entries applied.
const oldDataDir = "testdata/bolt-schema2"

// copyOldDataDir copies oldDataDir's raft dir into a new temp data dir.
func copyOldDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "raft"), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(oldDataDir, "raft", boltLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raft", boltLogFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// objectLines is a store snapshot without its header line (which names
// the last applied index, raft's own no-op entries included).
func objectLines(b []byte) string {
	_, rest, _ := strings.Cut(string(b), "\n")
	return rest
}

// openOld opens the data dir as replica "old" with the given log store,
// waits for it to lead and for the recorded entries to apply, and checks
// the state against want-state.jsonl.
func openOld(t *testing.T, dir, kind string) *Node {
	t.Helper()
	cfg := testConfig(t, "old", dir, false)
	cfg.LogStore = kind
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Shutdown() })
	waitLeaderCh(t, n.LeaderCh())
	want, err := os.ReadFile(filepath.Join(oldDataDir, "want-state.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for objectLines(n.State().Snapshot().Bytes()) != objectLines(want) {
		if time.Now().After(deadline) {
			t.Fatalf("state after replay:\n%s\nwant:\n%s", n.State().Snapshot().Bytes(), want)
		}
		if err := n.Barrier(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func mustExist(t *testing.T, dir string, names map[string]bool) {
	t.Helper()
	for name, want := range names {
		_, err := os.Stat(filepath.Join(dir, "raft", name))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v (%v)", name, got, want, err)
		}
	}
}

func TestOldBoltDataDirKeptWithBoltStore(t *testing.T) {
	dir := copyOldDataDir(t)
	n := openOld(t, dir, LogStoreBolt)
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	mustExist(t, dir, map[string]bool{boltLogFile: true, walDir: false, boltMigratedFile: false})
}

func TestOldBoltDataDirMigratesToWAL(t *testing.T) {
	dir := copyOldDataDir(t)
	n := openOld(t, dir, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.Apply(ctx, put(t, "after", `1`)); err != nil {
		t.Fatal(err)
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}
	mustExist(t, dir, map[string]bool{boltLogFile: false, walDir: true, boltMigratedFile: true, walMigratingDir: false})

	cfg := testConfig(t, "old", dir, false)
	cfg.LogStore = LogStoreWAL
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	waitLeaderCh(t, n.LeaderCh())
	if err := n.Barrier(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.State().Get("Node", "after"); !ok {
		t.Fatal("a write acknowledged after the migration is gone on restart")
	}
	if err := n.Shutdown(); err != nil {
		t.Fatal(err)
	}

	cfg.LogStore = LogStoreBolt
	if _, err := Open(cfg); !errors.Is(err, ErrLogStoreMismatch) {
		t.Fatalf("bolt store on a wal data dir: %v, want ErrLogStoreMismatch", err)
	}
}

// TestMigrationCrashLeavesStartableDir stops the migration where a crash
// could, then starts the replica: it must come up with every entry.
func TestMigrationCrashLeavesStartableDir(t *testing.T) {
	errCrash := errors.New("crash")
	for _, step := range []string{"partial copy", stepCopied, stepWALInPlace, stepBoltRetired} {
		t.Run(step, func(t *testing.T) {
			dir := copyOldDataDir(t)
			raftDir := filepath.Join(dir, "raft")
			if step == "partial copy" {
				if err := copyBoltToWAL(filepath.Join(raftDir, boltLogFile), filepath.Join(raftDir, walMigratingDir), hclog.NewNullLogger()); err != nil {
					t.Fatal(err)
				}
				seg, err := filepath.Glob(filepath.Join(raftDir, walMigratingDir, "*.wal"))
				if err != nil || len(seg) == 0 {
					t.Fatalf("no wal segment: %v", err)
				}
				if err := os.Truncate(seg[0], 100); err != nil {
					t.Fatal(err)
				}
			} else {
				hooks := migrateHooks{after: func(s string) error {
					if s == step {
						return errCrash
					}
					return nil
				}}
				if err := migrateBoltToWAL(raftDir, hclog.NewNullLogger(), hooks); !errors.Is(err, errCrash) {
					t.Fatalf("migration stopped with %v, want the crash", err)
				}
			}
			openOld(t, dir, LogStoreWAL)
			mustExist(t, dir, map[string]bool{boltLogFile: false, walDir: true, boltMigratedFile: true, walMigratingDir: false})
		})
	}
}
