// Copyright (c) HashiCorp, Inc.
// SPDX-License-Identifier: MPL-2.0

package raft

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// gatedStore is an InmemStore whose StoreLogs, once armed, announces
// itself and waits to be released, then stores or fails.
type gatedStore struct {
	*InmemStore
	mu      sync.Mutex
	armed   bool
	fail    error
	entered chan struct{}
	release chan struct{}
	once    *sync.Once
}

func newGatedStore() *gatedStore {
	return &gatedStore{InmemStore: NewInmemStore()}
}

// arm makes the next StoreLogs wait for release and then return fail
// (nil: store the logs).
func (g *gatedStore) arm(fail error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.fail = true, fail
	g.entered, g.release, g.once = make(chan struct{}), make(chan struct{}), new(sync.Once)
}

// open releases a waiting (or the next armed) StoreLogs; it may be called
// more than once.
func (g *gatedStore) open() {
	g.mu.Lock()
	release, once := g.release, g.once
	g.mu.Unlock()
	if once != nil {
		once.Do(func() { close(release) })
	}
}

func (g *gatedStore) StoreLogs(logs []*Log) error {
	g.mu.Lock()
	armed, fail, entered, release := g.armed, g.fail, g.entered, g.release
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(entered)
		<-release
		if fail != nil {
			return fail
		}
	}
	return g.InmemStore.StoreLogs(logs)
}

func (g *gatedStore) StoreLog(l *Log) error { return g.StoreLogs([]*Log{l}) }

// gatedCluster is three voters over in-memory transports, each on a
// gatedStore.
type gatedCluster struct {
	rafts  []*Raft
	stores []*gatedStore
	fsms   []*MockFSM
	trans  []*InmemTransport
}

func newGatedCluster(t *testing.T) *gatedCluster {
	t.Helper()
	c := &gatedCluster{}
	var cfg Configuration
	for i := 0; i < 3; i++ {
		addr, tr := NewInmemTransport("")
		c.trans = append(c.trans, tr)
		c.stores = append(c.stores, newGatedStore())
		c.fsms = append(c.fsms, &MockFSM{})
		cfg.Servers = append(cfg.Servers, Server{Suffrage: Voter, ID: ServerID(fmt.Sprintf("s%d", i)), Address: addr})
	}
	for _, a := range c.trans {
		for _, b := range c.trans {
			a.Connect(b.LocalAddr(), b)
		}
	}
	for i := range c.trans {
		conf := inmemConfig(t)
		conf.LocalID = cfg.Servers[i].ID
		snaps := NewInmemSnapshotStore()
		if err := BootstrapCluster(conf, c.stores[i], c.stores[i], snaps, c.trans[i], cfg); err != nil {
			t.Fatal(err)
		}
		r, err := NewRaft(conf, c.fsms[i], c.stores[i], c.stores[i], snaps, c.trans[i])
		if err != nil {
			t.Fatal(err)
		}
		c.rafts = append(c.rafts, r)
	}
	t.Cleanup(func() {
		// A failed test may leave a write waiting: let it go, so the
		// leader loop can shut down.
		for _, s := range c.stores {
			s.open()
		}
		for _, r := range c.rafts {
			_ = r.Shutdown().Error()
		}
	})
	return c
}

// leader waits for a leader and returns its position.
func (c *gatedCluster) leader(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for i, r := range c.rafts {
			if r.State() == Leader {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader within 5s")
	return -1
}

// waitFor polls cond every 5 ms for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasLog(s *gatedStore, index uint64) bool {
	var l Log
	return s.InmemStore.GetLog(index, &l) == nil
}

func applied(f *MockFSM) int {
	f.Lock()
	defer f.Unlock()
	return len(f.logs)
}

// TestLeaderReplicatesWhileItsWriteRuns holds the leader's log write open
// and checks that both followers store the entry meanwhile, and that the
// apply completes once the write returns.
func TestLeaderReplicatesWhileItsWriteRuns(t *testing.T) {
	c := newGatedCluster(t)
	l := c.leader(t)
	if err := c.rafts[l].Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	index := c.rafts[l].LastIndex() + 1 // the entry applied next
	c.stores[l].arm(nil)
	f := c.rafts[l].Apply([]byte("x"), 5*time.Second)
	<-c.stores[l].entered
	for i := range c.rafts {
		if i != l {
			waitFor(t, fmt.Sprintf("follower %d stores entry %d while the leader writes it", i, index), func() bool { return hasLog(c.stores[i], index) })
		}
	}
	if hasLog(c.stores[l], index) {
		t.Fatal("the leader's store holds the entry before its write returned")
	}
	c.stores[l].open()
	if err := f.Error(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if f.Index() != index || !hasLog(c.stores[l], index) {
		t.Fatalf("apply at %d, leader store has it: %v; want %d, true", f.Index(), hasLog(c.stores[l], index), index)
	}
}

// TestLeaderCountsItselfOnlyOnceWritten cuts one follower off, holds the
// leader's write open, and checks that the entry the other follower
// stored is not committed (no follower applies it) until the leader's
// write returns: one follower and a leader that has not written it are
// not a majority that holds it.
func TestLeaderCountsItselfOnlyOnceWritten(t *testing.T) {
	c := newGatedCluster(t)
	l := c.leader(t)
	if err := c.rafts[l].Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	on, off := (l+1)%3, (l+2)%3
	c.trans[l].Disconnect(c.trans[off].LocalAddr())
	c.trans[off].Disconnect(c.trans[l].LocalAddr())
	before := applied(c.fsms[on])

	index := c.rafts[l].LastIndex() + 1 // the entry applied next
	c.stores[l].arm(nil)
	f := c.rafts[l].Apply([]byte("x"), 5*time.Second)
	<-c.stores[l].entered
	waitFor(t, "the connected follower stores the entry", func() bool { return hasLog(c.stores[on], index) })
	// Followers learn the commit index with every AppendEntries, at least
	// once per CommitTimeout (5 ms here): give them many.
	time.Sleep(100 * time.Millisecond)
	if got := c.rafts[l].getCommitIndex(); got >= index {
		t.Fatalf("commit index %d reached entry %d before the leader wrote it", got, index)
	}
	if got := applied(c.fsms[on]); got != before {
		t.Fatalf("the follower applied %d entries before the leader wrote the entry", got-before)
	}

	c.stores[l].open()
	if err := f.Error(); err != nil {
		t.Fatalf("apply: %v", err)
	}
	waitFor(t, "the connected follower applies the entry", func() bool { return applied(c.fsms[on]) == before+1 })
}

// TestLeaderWriteFailureStepsDown fails the leader's log write while the
// followers already hold the batch: the caller learns the outcome is
// unknown, the leader steps down with its last index back at what its
// store holds, and the cluster goes on to agree on one log.
func TestLeaderWriteFailureStepsDown(t *testing.T) {
	c := newGatedCluster(t)
	l := c.leader(t)
	if err := c.rafts[l].Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	index := c.rafts[l].LastIndex() + 1 // the entry applied next
	c.stores[l].arm(errors.New("disk gone"))
	f := c.rafts[l].Apply([]byte("x"), 5*time.Second)
	<-c.stores[l].entered
	for i := range c.rafts {
		if i != l {
			waitFor(t, "followers store the entry", func() bool { return hasLog(c.stores[i], index) })
		}
	}
	c.stores[l].open()
	if err := f.Error(); !errors.Is(err, ErrLeadershipLost) {
		t.Fatalf("apply: %v, want %v", err, ErrLeadershipLost)
	}
	waitFor(t, "the old leader steps down", func() bool { return c.rafts[l].State() != Leader })
	// Read in this order, a last index beyond the store's means raft
	// claims entries its store never held (the store only grows).
	got := c.rafts[l].getLastIndex()
	stored, err := c.stores[l].LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	if got > stored {
		t.Fatalf("the old leader's last index %d is beyond its store's %d", got, stored)
	}

	nl := c.leader(t)
	if err := c.rafts[nl].Apply([]byte("y"), 5*time.Second).Error(); err != nil {
		t.Fatalf("apply on the new leader: %v", err)
	}
	waitFor(t, "all three apply the same entries", func() bool {
		want := fmt.Sprint(c.fsms[nl].Logs())
		for _, f := range c.fsms {
			if fmt.Sprint(f.Logs()) != want {
				return false
			}
		}
		return true
	})
}
