package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/raftnode"
)

// DefaultTimeout bounds every wait the harness does on its own.
const DefaultTimeout = 30 * time.Second

// Options shapes a cluster. The zero value is a 3-replica cluster.
type Options struct {
	// Replicas is how many replicas New starts (default 3).
	Replicas int
	// SnapshotThreshold, SnapshotInterval and TrailingLogs are passed to
	// every replica's raftnode.Config when set.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// LogLevel is the lowest level logged through t.Log (default Warn).
	LogLevel slog.Level
	// Hooks run at points of each replica's life.
	Hooks Hooks
}

// Hooks let a suite extend each replica, e.g. with an API server.
type Hooks struct {
	// Configure adjusts a replica's config before its node opens; the
	// config already holds a TCPStreamLayer over the replica's listener,
	// which Configure may wrap or replace.
	Configure func(r *Replica, cfg *raftnode.Config)
	// Started runs after a replica's node opened (on start and restart).
	// A returned error fails the test.
	Started func(r *Replica) error
	// Stopping runs before a replica's node shuts down.
	Stopping func(r *Replica)
}

// Cluster is a set of in-process replicas.
type Cluster struct {
	t      testing.TB
	opts   Options
	log    *slog.Logger
	closed *atomic.Bool
	// root holds every replica's data dir.
	root string

	mu       sync.Mutex
	replicas []*Replica
}

// Replica is one replica. Node is nil while the replica is stopped.
type Replica struct {
	// Index is the replica's position in the cluster, from 0.
	Index int
	// ID is its raft server id ("r0", "r1", …).
	ID string
	// DataDir is its data dir; it survives Stop and Restart.
	DataDir string
	// Addr is its raft address (127.0.0.1:port); it survives Restart.
	Addr string
	// Extra is free for hooks to keep per-replica things (servers, clients).
	Extra any

	mu   sync.Mutex
	node *raftnode.Node
}

// Node returns the running node, or nil while the replica is stopped.
func (r *Replica) Node() *raftnode.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.node
}

// New starts a cluster: replica 0 bootstraps, the others join it through
// AddVoter, as `--bootstrap` and `--join` do. It waits for a leader and for
// every replica to be a voter. Everything is shut down when the test ends.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Replicas <= 0 {
		opts.Replicas = 3
	}
	if opts.LogLevel == 0 {
		opts.LogLevel = slog.LevelWarn
	}
	// The data dirs live under one directory made before the shutdown is
	// registered: cleanups run last first, so every replica (and a snapshot
	// it may still be writing) stops before its data dir is removed.
	c := &Cluster{t: t, opts: opts, closed: &atomic.Bool{}, root: t.TempDir()}
	c.log = testLogger(t, opts.LogLevel, c.closed)
	t.Cleanup(c.shutdownAll)

	first := c.newReplica()
	c.start(first, true)
	c.WaitLeader()
	for range opts.Replicas - 1 {
		c.Add()
	}
	return c
}

func (c *Cluster) shutdownAll() {
	c.mu.Lock()
	rs := append([]*Replica{}, c.replicas...)
	c.mu.Unlock()
	for _, r := range rs {
		c.stop(r)
	}
	c.closed.Store(true)
}

// Replicas returns every replica ever started, stopped ones included.
func (c *Cluster) Replicas() []*Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Replica{}, c.replicas...)
}

// Replica returns replica i.
func (c *Cluster) Replica(i int) *Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[i]
}

// Running returns the replicas whose node is running.
func (c *Cluster) Running() []*Replica {
	var out []*Replica
	for _, r := range c.Replicas() {
		if r.Node() != nil {
			out = append(out, r)
		}
	}
	return out
}

func (c *Cluster) newReplica() *Replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := len(c.replicas)
	r := &Replica{Index: i, ID: fmt.Sprintf("r%d", i), DataDir: filepath.Join(c.root, fmt.Sprintf("r%d", i))}
	c.replicas = append(c.replicas, r)
	return r
}

// listen opens the replica's raft listener: on :0 the first time, on the
// same address after a restart (polling while the port is still held).
func (c *Cluster) listen(r *Replica) net.Listener {
	c.t.Helper()
	if r.Addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.t.Fatalf("listen for %s: %v", r.ID, err)
		}
		r.Addr = l.Addr().String()
		return l
	}
	var l net.Listener
	c.Eventually(DefaultTimeout, func() error {
		var err error
		l, err = net.Listen("tcp", r.Addr)
		return err
	})
	return l
}

func (c *Cluster) start(r *Replica, bootstrap bool) {
	c.t.Helper()
	l := c.listen(r)
	cfg := raftnode.Config{
		ID:                r.ID,
		DataDir:           r.DataDir,
		Bootstrap:         bootstrap,
		SnapshotThreshold: c.opts.SnapshotThreshold,
		SnapshotInterval:  c.opts.SnapshotInterval,
		TrailingLogs:      c.opts.TrailingLogs,
		Logger:            c.log,
		RaftLogLevel:      c.opts.LogLevel,
		FastTimeouts:      true,
		StreamLayer:       raftnode.NewTCPStreamLayer(l, nil),
		ApplyTimeout:      DefaultTimeout,
	}
	if c.opts.Hooks.Configure != nil {
		c.opts.Hooks.Configure(r, &cfg)
	}
	n, err := raftnode.Open(cfg)
	if err != nil {
		l.Close()
		c.t.Fatalf("open %s: %v", r.ID, err)
	}
	r.mu.Lock()
	r.node = n
	r.mu.Unlock()
	if c.opts.Hooks.Started != nil {
		if err := c.opts.Hooks.Started(r); err != nil {
			c.t.Fatalf("start hook for %s: %v", r.ID, err)
		}
	}
}

func (c *Cluster) stop(r *Replica) {
	r.mu.Lock()
	n := r.node
	r.node = nil
	r.mu.Unlock()
	if n == nil {
		return
	}
	if c.opts.Hooks.Stopping != nil {
		c.opts.Hooks.Stopping(r)
	}
	if err := n.Shutdown(); err != nil {
		c.t.Errorf("shut down %s: %v", r.ID, err)
	}
}

// Stop shuts replica i down, keeping its data dir and address.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	c.stop(c.Replica(i))
}

// Restart starts a stopped replica i again from its data dir, on the same
// address.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	r := c.Replica(i)
	if r.Node() != nil {
		c.t.Fatalf("restart %s: still running", r.ID)
	}
	c.start(r, false)
}

// Add starts a new replica and joins it to the cluster as a voter through
// the leader, then waits until it has caught up with the leader's log.
func (c *Cluster) Add() *Replica {
	c.t.Helper()
	r := c.newReplica()
	c.start(r, false)
	c.Eventually(DefaultTimeout, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return l.Node().AddVoter(ctx, r.ID, r.Addr)
	})
	c.WaitCaughtUp()
	return r
}

// Remove removes replica i from the configuration through the leader (it
// must not be the leader's own quorum-breaking removal) and stops it.
func (c *Cluster) Remove(i int) {
	c.t.Helper()
	r := c.Replica(i)
	c.Eventually(DefaultTimeout, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := l.Node().RemoveServer(ctx, r.ID)
		if errors.Is(err, raftnode.ErrQuorumLoss) {
			c.t.Fatalf("remove %s: %v", r.ID, err)
		}
		return err
	})
	c.stop(r)
}
