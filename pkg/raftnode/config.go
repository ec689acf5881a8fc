package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/version"
)

// Config configures one replica.
type Config struct {
	// ID is the replica's stable raft server id; unique in the cluster.
	ID string
	// DataDir holds the raft log (raft.db) and snapshots under DataDir/raft.
	DataDir string
	// RaftBind is the address the raft transport listens on, e.g.
	// 0.0.0.0:7001. Ignored when StreamLayer is set.
	RaftBind string
	// RaftAdvertise is the address peers dial; defaults to the bound
	// address, which must then not be unspecified. Ignored when StreamLayer
	// is set.
	RaftAdvertise string
	// Bootstrap forms a new single-voter cluster when DataDir holds no raft
	// state yet; it is a no-op on a replica that already has state.
	Bootstrap bool
	// SnapshotThreshold is how many log entries since the last snapshot
	// trigger a new one (raft default 8192).
	SnapshotThreshold uint64
	// SnapshotInterval is how often raft checks whether to snapshot (raft
	// default 120s).
	SnapshotInterval time.Duration
	// TrailingLogs is how many entries to keep in the log after a snapshot
	// (raft default 10240), so slow followers catch up without a snapshot.
	TrailingLogs uint64
	// SnapshotRetain is how many snapshots to keep on disk (default 2).
	SnapshotRetain int
	// Logger receives the node's and raft's logs; nil discards them.
	Logger *slog.Logger
	// RaftLogLevel is the lowest level of raft's own logs passed to Logger
	// (default Info; tests use Warn).
	RaftLogLevel slog.Level
	// FastTimeouts uses heartbeat and election timeouts of 150 ms instead
	// of raft's 1 s, for in-process tests.
	FastTimeouts bool
	// StreamLayer, when set, carries raft traffic instead of a plain TCP
	// listener on RaftBind (e.g. a TLS layer, or a test's :0 listener). Its
	// Addr is the advertised address. The node closes it on Shutdown.
	StreamLayer raft.StreamLayer
	// ApplyTimeout bounds how long Apply waits to enqueue a command when the
	// caller's context has no deadline (default 30s).
	ApplyTimeout time.Duration
	// NoSync skips fsync of the bolt raft log. Unsafe; only for benchmarks
	// and tests that do not cut power. The WAL always syncs.
	NoSync bool
	// LogStore selects the raft log and stable store: LogStoreWAL or
	// LogStoreBolt; empty means DefaultLogStore. With LogStoreWAL a data
	// dir that holds a bolt log is migrated at start; with LogStoreBolt a
	// data dir that holds a WAL is refused (ErrLogStoreMismatch).
	LogStore string
	// ReadSchema, when set, is the newest controller schema the replica
	// reads (1 to version.Schema; 0 means version.Schema): it refuses
	// newer log entries and snapshots as a build of that schema would
	// (store.State.LimitReads). It stands in for a replica of an older
	// release in tests of rolling upgrades; it can only make the replica
	// refuse more, and the controller never sets it.
	ReadSchema int
}

func (c Config) validate() error {
	if c.ID == "" {
		return errors.New("config: id is required")
	}
	if c.DataDir == "" {
		return errors.New("config: data dir is required")
	}
	if c.StreamLayer == nil && c.RaftBind == "" {
		return errors.New("config: raft bind address is required")
	}
	if c.ReadSchema < 0 || c.ReadSchema > version.Schema {
		return fmt.Errorf("config: read schema %d: this build reads 1 to %d", c.ReadSchema, version.Schema)
	}
	return nil
}

// maxAppendEntries bounds how many entries the leader commits with one
// log write (two fdatasyncs in bbolt) and sends in one AppendEntries RPC,
// and with BatchApplyCh how many Apply calls queue for the next write.
// Raft's default of 64 made 256 concurrent writers wait for four log
// writes in turn; a few hundred 1 KiB entries are well under a megabyte.
const maxAppendEntries = 256

func (c Config) raftConfig(logger *slog.Logger) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(c.ID)
	rc.Logger = newHCLog(logger.With("component", "raft"), c.RaftLogLevel)
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = maxAppendEntries
	rc.NoLegacyTelemetry = true
	if c.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = c.SnapshotThreshold
	}
	if c.SnapshotInterval > 0 {
		rc.SnapshotInterval = c.SnapshotInterval
	}
	if c.TrailingLogs > 0 {
		rc.TrailingLogs = c.TrailingLogs
	}
	if c.FastTimeouts {
		rc.HeartbeatTimeout = 150 * time.Millisecond
		rc.ElectionTimeout = 150 * time.Millisecond
		// The lease equals the heartbeat so a leader on a loaded test
		// machine does not step down over one slow scheduling round.
		rc.LeaderLeaseTimeout = 150 * time.Millisecond
		rc.CommitTimeout = 5 * time.Millisecond
	}
	return rc
}
