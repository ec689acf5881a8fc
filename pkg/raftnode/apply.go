package raftnode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/store"
)

// Apply replicates cmd and returns its result once this replica has applied
// it. It stamps the schema the command is written in (the one every member
// reads, see stampSchema) and what the caller left empty: Time (now, UTC,
// RFC 3339 with nanoseconds) and ID (random). On a follower it returns
// *ErrNotLeader without replicating anything.
//
// The error is the command's own error (res.Err: store.ErrConflict, …) when
// it was committed but failed; *ErrNotLeader when it was not replicated;
// ErrLeadershipLost when the outcome is unknown; or the context's error
// when ctx ended first (the command may still commit).
func (n *Node) Apply(ctx context.Context, cmd store.Command) (store.Result, error) {
	if !n.IsLeader() {
		id, addr := n.Leader()
		return store.Result{}, &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
	}
	if err := n.stampSchema(ctx, &cmd); err != nil {
		return store.Result{}, fmt.Errorf("apply %s: %w", cmd.Type, err)
	}
	if cmd.Time == "" {
		cmd.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if cmd.ID == "" {
		cmd.ID = newID()
	}
	b, err := cmd.Encode()
	if err != nil {
		return store.Result{}, err
	}
	f := n.raft.Apply(b, n.timeout(ctx))
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case <-ctx.Done():
		return store.Result{}, fmt.Errorf("apply %s: %w", cmd.Type, ctx.Err())
	case err := <-done:
		if err != nil {
			return store.Result{}, n.mapErr("apply "+cmd.Type, err)
		}
	}
	res, ok := f.Response().(store.Result)
	if !ok {
		return store.Result{Index: f.Index()}, fmt.Errorf("apply %s: unexpected response %T", cmd.Type, f.Response())
	}
	return res, res.Err
}

// VerifyLeader confirms with a quorum that this replica is still leader,
// for leader-confirmed reads: after it returns nil, State reflects every
// write acknowledged before the call.
func (n *Node) VerifyLeader(ctx context.Context) error {
	if !n.IsLeader() {
		id, addr := n.Leader()
		return &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
	}
	if err := n.wait(ctx, n.raft.VerifyLeader()); err != nil {
		return n.mapErr("verify leader", err)
	}
	// A new leader may not have applied everything committed before its
	// term yet; one barrier per term makes State catch up.
	term := n.raft.CurrentTerm()
	if n.readTerm.Load() == term {
		return nil
	}
	if err := n.Barrier(ctx); err != nil {
		return err
	}
	n.readTerm.Store(term)
	return nil
}

// Barrier waits until every entry committed before the call is applied to
// State. Leader only.
func (n *Node) Barrier(ctx context.Context) error {
	if err := n.wait(ctx, n.raft.Barrier(n.timeout(ctx))); err != nil {
		return n.mapErr("barrier", err)
	}
	return nil
}

// wait waits for a raft future or the context, whichever ends first.
func (n *Node) wait(ctx context.Context, f raft.Future) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-done:
		return err
	}
}

// timeout is the enqueue timeout for a raft call: the context's remaining
// time, or the configured ApplyTimeout.
func (n *Node) timeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d > 0 {
			return d
		}
		return time.Millisecond
	}
	return n.cfg.ApplyTimeout
}

// newID returns 16 random bytes in hex, the id the leader stamps on a
// command.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
