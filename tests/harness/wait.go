package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/store"
)

// Eventually polls cond until it returns nil, failing the test with cond's
// last error when timeout passes first.
func (c *Cluster) Eventually(timeout time.Duration, cond func() error) {
	c.t.Helper()
	if err := Poll(timeout, cond); err != nil {
		c.t.Fatal(err)
	}
}

// Poll calls cond every few milliseconds until it returns nil or timeout
// passes; then it returns cond's last error.
func Poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s: %w", timeout, err)
		}
		<-tick.C
	}
}

// Leader returns the running replica that is leader, or nil.
func (c *Cluster) Leader() *Replica {
	for _, r := range c.Running() {
		if n := r.Node(); n != nil && n.IsLeader() {
			return r
		}
	}
	return nil
}

// WaitLeader waits until one running replica is leader and every running
// replica agrees on it, and returns it.
func (c *Cluster) WaitLeader() *Replica {
	c.t.Helper()
	var leader *Replica
	c.Eventually(DefaultTimeout, func() error {
		leader = c.Leader()
		if leader == nil {
			return errors.New("no leader")
		}
		for _, r := range c.Running() {
			if id, _ := r.Node().Leader(); id != leader.ID {
				return fmt.Errorf("%s sees leader %q, not %s", r.ID, id, leader.ID)
			}
		}
		return nil
	})
	return leader
}

// WaitCaughtUp waits until every running replica has applied everything
// the leader had committed when the call began.
func (c *Cluster) WaitCaughtUp() {
	c.t.Helper()
	leader := c.WaitLeader()
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	c.Eventually(DefaultTimeout, func() error { return leader.Node().Barrier(ctx) })
	target := leader.Node().Raft().AppliedIndex()
	c.Eventually(DefaultTimeout, func() error {
		for _, r := range c.Running() {
			if got := r.Node().Raft().AppliedIndex(); got < target {
				return fmt.Errorf("%s applied %d of %d", r.ID, got, target)
			}
		}
		return nil
	})
}

// WaitConverged waits until every running replica's store snapshots to the
// same bytes, and returns them.
func (c *Cluster) WaitConverged() []byte {
	c.t.Helper()
	var snap []byte
	c.Eventually(DefaultTimeout, func() error {
		rs := c.Running()
		if len(rs) == 0 {
			return errors.New("no replica running")
		}
		snap = rs[0].Node().State().Snapshot().Bytes()
		for _, r := range rs[1:] {
			if other := r.Node().State().Snapshot().Bytes(); !bytes.Equal(snap, other) {
				return fmt.Errorf("%s differs from %s (last index %d vs %d)", r.ID, rs[0].ID,
					r.Node().State().LastIndex(), rs[0].Node().State().LastIndex())
			}
		}
		return nil
	})
	return snap
}

// Apply applies cmd through whichever replica is leader, retrying while
// there is no leader or the replica asked turned out not to be it (the
// command was then not replicated, so retrying is safe). Other errors,
// including raftnode.ErrLeadershipLost and raftnode.ErrShutdown (outcome
// unknown), are returned as they are.
func (c *Cluster) Apply(ctx context.Context, cmd store.Command) (store.Result, error) {
	for {
		l := c.Leader()
		if l != nil {
			if n := l.Node(); n != nil {
				res, err := n.Apply(ctx, cmd)
				var nl *raftnode.ErrNotLeader
				if !errors.As(err, &nl) {
					return res, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return store.Result{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// ApplyRetry is Apply that also retries when the outcome was unknown
// (raftnode.ErrLeadershipLost, raftnode.ErrShutdown). Use it only for
// commands whose repetition is harmless: unconditional puts of the same
// data, or creates guarded by CAS whose conflict the caller interprets.
func (c *Cluster) ApplyRetry(ctx context.Context, cmd store.Command) (store.Result, error) {
	for {
		res, err := c.Apply(ctx, cmd)
		if !errors.Is(err, raftnode.ErrLeadershipLost) && !errors.Is(err, raftnode.ErrShutdown) {
			return res, err
		}
	}
}

// Describe summarises the replicas' roles and indexes, for failure
// messages.
func (c *Cluster) Describe() string {
	var b bytes.Buffer
	for _, r := range c.Replicas() {
		n := r.Node()
		if n == nil {
			fmt.Fprintf(&b, "%s stopped; ", r.ID)
			continue
		}
		st := n.Stats()
		fmt.Fprintf(&b, "%s %s term=%s applied=%s; ", r.ID, st["state"], st["term"], strconv.FormatUint(n.Raft().AppliedIndex(), 10))
	}
	return b.String()
}
