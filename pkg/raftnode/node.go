package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"

	"kcore.dev/kcore/pkg/store"
)

// logCacheSize is how many of the newest log entries the node keeps in
// memory in front of the log store, so the leader replicates what it has just
// written without reading it back from disk. It covers a few of raft's
// batches (maxAppendEntries) per follower.
const logCacheSize = 2048

// boltOptions are the raft log's bbolt options. The freelist is not
// written with every commit (bbolt rebuilds it by scanning the file when it
// opens, as etcd's backend does): after a log truncation it holds hundreds
// of thousands of pages, and writing and syncing it made every commit
// slower. The hashmap freelist allocates and frees pages in constant time
// instead of merging sorted arrays. Neither changes what is fsynced for the
// log entries themselves.
func boltOptions() *bbolt.Options {
	return &bbolt.Options{
		Timeout:        5 * time.Second,
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	}
}

// Node is one running replica: raft, its stores and transport, and the
// replicated store.State.
type Node struct {
	cfg   Config
	log   *slog.Logger
	raft  *raft.Raft
	state *store.State
	fsm   *fsm
	trans *raft.NetworkTransport
	logs  logStore
	cache *raft.LogCache
	snaps *raft.FileSnapshotStore

	observer *raft.Observer
	obsCh    chan raft.Observation

	mu       sync.Mutex
	failed   map[raft.ServerID]bool // peers whose heartbeats fail, seen while leader
	subs     []chan bool
	isLeader bool

	readTerm atomic.Uint64 // term in which a barrier made reads consistent

	servers serverCache // the raft configuration's server ids, for writeSchema

	stop     chan struct{}
	done     sync.WaitGroup
	shutOnce sync.Once
	shutErr  error
}

// Open starts a replica: it opens (or creates) the raft log and snapshots
// under cfg.DataDir, restores the store from the latest snapshot plus the
// log tail, starts the transport and, with cfg.Bootstrap on an empty data
// dir, forms a new single-voter cluster.
func Open(cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("open raft node: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("node", cfg.ID)
	if cfg.ApplyTimeout <= 0 {
		cfg.ApplyTimeout = 30 * time.Second
	}
	if cfg.SnapshotRetain <= 0 {
		cfg.SnapshotRetain = 2
	}
	rc := cfg.raftConfig(logger)

	dir := filepath.Join(cfg.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open raft node: create %s: %w", dir, err)
	}
	n := &Node{
		cfg:    cfg,
		log:    logger,
		state:  store.New(logger.With("component", "store")),
		failed: map[raft.ServerID]bool{},
		stop:   make(chan struct{}),
	}
	if cfg.ReadSchema != 0 {
		if err := n.state.LimitReads(cfg.ReadSchema); err != nil {
			return nil, fmt.Errorf("open raft node: %w", err)
		}
	}
	n.fsm = &fsm{state: n.state, log: logger}

	logs, raftLogs, err := openLogStore(dir, cfg.LogStore, cfg.NoSync, rc.Logger)
	if err != nil {
		return nil, fmt.Errorf("open raft node: %w", err)
	}
	n.logs = logs
	if n.cache, err = raft.NewLogCache(logCacheSize, raftLogs); err != nil {
		n.logs.Close()
		return nil, fmt.Errorf("open raft node: %w", err)
	}
	n.snaps, err = raft.NewFileSnapshotStoreWithLogger(dir, cfg.SnapshotRetain, rc.Logger.Named("snapshot"))
	if err != nil {
		n.logs.Close()
		return nil, fmt.Errorf("open raft node: open snapshots: %w", err)
	}

	stream := cfg.StreamLayer
	if stream == nil {
		stream, err = listenTCP(cfg.RaftBind, cfg.RaftAdvertise)
		if err != nil {
			n.logs.Close()
			return nil, fmt.Errorf("open raft node: %w", err)
		}
	}
	n.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  stream,
		MaxPool: 3,
		Timeout: 10 * time.Second,
		Logger:  rc.Logger.Named("transport"),
	})

	if cfg.Bootstrap {
		if err := n.bootstrap(rc); err != nil {
			n.closeStores()
			return nil, fmt.Errorf("open raft node: %w", err)
		}
	}

	n.raft, err = raft.NewRaft(rc, n.fsm, n.cache, n.logs, n.snaps, n.trans)
	if err != nil {
		n.closeStores()
		return nil, fmt.Errorf("open raft node: start raft: %w", err)
	}
	n.watchRaft()
	logger.Info("raft node started", "addr", n.Addr(), "data_dir", cfg.DataDir)
	return n, nil
}

func (n *Node) bootstrap(rc *raft.Config) error {
	has, err := raft.HasExistingState(n.logs, n.logs, n.snaps)
	if err != nil {
		return fmt.Errorf("bootstrap: read existing state: %w", err)
	}
	if has {
		n.log.Info("bootstrap skipped: data dir already holds raft state")
		return nil
	}
	conf := raft.Configuration{Servers: []raft.Server{{
		Suffrage: raft.Voter, ID: rc.LocalID, Address: n.trans.LocalAddr(),
	}}}
	if err := raft.BootstrapCluster(rc, n.logs, n.logs, n.snaps, n.trans, conf); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	n.log.Info("bootstrapped a new cluster", "id", rc.LocalID, "addr", n.trans.LocalAddr())
	return nil
}

func (n *Node) closeStores() {
	if n.trans != nil {
		n.trans.Close()
	}
	if n.logs != nil {
		n.logs.Close()
	}
}

// ID returns the replica's raft server id.
func (n *Node) ID() string { return n.cfg.ID }

// Addr returns the replica's advertised raft address.
func (n *Node) Addr() string { return string(n.trans.LocalAddr()) }

// State returns the replicated state for reads and blocking queries. Reads
// are as fresh as this replica's applied index; call VerifyLeader or
// Barrier first for a leader-confirmed read.
func (n *Node) State() *store.State { return n.state }

// Raft returns the underlying raft instance, for metrics and diagnostics.
func (n *Node) Raft() *raft.Raft { return n.raft }

// IsLeader reports whether this replica currently believes it is leader.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// Leader returns the id and raft address of the leader this replica knows,
// both empty when there is none.
func (n *Node) Leader() (id, addr string) {
	a, i := n.raft.LeaderWithID()
	return string(i), string(a)
}

// Stats returns raft's statistics (state, term, indexes, last contact).
func (n *Node) Stats() map[string]string { return n.raft.Stats() }

// Shutdown stops raft, the transport and the log store. It is safe to call
// more than once.
func (n *Node) Shutdown() error {
	n.shutOnce.Do(func() {
		err := n.raft.Shutdown().Error()
		close(n.stop)
		n.raft.DeregisterObserver(n.observer)
		n.done.Wait()
		n.mu.Lock()
		for _, ch := range n.subs {
			close(ch)
		}
		n.subs = nil
		n.mu.Unlock()
		n.shutErr = errors.Join(err, n.trans.Close(), n.logs.Close())
		if n.shutErr != nil {
			n.shutErr = fmt.Errorf("shut down raft node %s: %w", n.cfg.ID, n.shutErr)
		}
	})
	return n.shutErr
}
