package server

import (
	"context"
	"errors"
	"io"

	"kcore.dev/kcore/pkg/store"
)

// Errors a Backend returns; the server maps them to API error codes. A
// Backend wraps its own errors with these (fmt.Errorf("%w: %w", ...)).
var (
	// ErrNotLeader means the call needs the leader and this replica is not it.
	ErrNotLeader = errors.New("not the leader")
	// ErrQuorumLoss means a membership change would lose quorum or remove the
	// last voter.
	ErrQuorumLoss = errors.New("change would lose quorum")
)

// Peer is one server of the raft configuration.
type Peer struct {
	// ID is the raft server id.
	ID string
	// Addr is the raft transport address.
	Addr string
	// Suffrage is Voter, Nonvoter or Staging.
	Suffrage string
}

// Backend is what the server needs from the replicated state: pkg/raftnode
// behind a thin adapter in pkg/controller, or a local stand-in in tests.
type Backend interface {
	// State is the local replica's store, for reads and blocking queries.
	State() *store.State
	// Apply replicates cmd through raft and returns its store result once
	// applied on this replica. It fails with ErrNotLeader on a follower.
	Apply(ctx context.Context, cmd store.Command) (store.Result, error)
	// ID is this replica's raft id.
	ID() string
	// RaftState is leader, follower, candidate or shutdown.
	RaftState() string
	// Leader returns the leader's raft id and address, "" when unknown.
	Leader() (id, raftAddr string)
	// VerifyLeader confirms this replica is still the leader with a quorum.
	VerifyLeader(ctx context.Context) error
	// LastIndex is the last index in this replica's raft log.
	LastIndex() uint64
	// Peers returns the current raft configuration.
	Peers(ctx context.Context) ([]Peer, error)
	// AddVoter adds (or re-adds) a voting member.
	AddVoter(ctx context.Context, id, raftAddr string) error
	// RemoveServer removes a member; ErrQuorumLoss when that would lose quorum.
	RemoveServer(ctx context.Context, id string) error
	// Snapshot writes a user snapshot of the state (store snapshot format).
	Snapshot(ctx context.Context, w io.Writer) error
	// Restore replaces the replicated state with a snapshot; errors wrap
	// store.ErrSchemaTooNew or store.ErrInvalid when the snapshot is refused.
	Restore(ctx context.Context, r io.Reader) error
}
