package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/store"
)

// Backend adapts a raftnode.Node to server.Backend, mapping raftnode's
// errors to the server's sentinels.
type Backend struct {
	n *raftnode.Node
	// Render are the orchestrator's render options, which plans render with.
	Render render.Options
}

// NewBackend returns the server.Backend of a raft node.
func NewBackend(n *raftnode.Node) *Backend { return &Backend{n: n} }

// RenderOptions are the options the orchestrator renders with: plans
// computed by the API render with the same ones.
func (b *Backend) RenderOptions() render.Options { return b.Render }

// mapErr wraps raftnode errors with the server sentinels they mean.
func mapErr(err error) error {
	var nl *raftnode.ErrNotLeader
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nl), errors.Is(err, raftnode.ErrLeadershipLost), errors.Is(err, raftnode.ErrShutdown):
		return fmt.Errorf("%w: %w", server.ErrNotLeader, err)
	case errors.Is(err, raftnode.ErrQuorumLoss):
		return fmt.Errorf("%w: %w", server.ErrQuorumLoss, err)
	case errors.Is(err, raftnode.ErrUnknownMember):
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	}
	return err
}

// State returns the node's store.
func (b *Backend) State() *store.State { return b.n.State() }

// Apply replicates cmd.
func (b *Backend) Apply(ctx context.Context, cmd store.Command) (store.Result, error) {
	res, err := b.n.Apply(ctx, cmd)
	if err != nil && res.Err == nil {
		return res, mapErr(err)
	}
	return res, nil
}

// ID returns the node's raft id.
func (b *Backend) ID() string { return b.n.ID() }

// RaftState returns leader, follower, candidate or shutdown.
func (b *Backend) RaftState() string { return strings.ToLower(b.n.Raft().State().String()) }

// Leader returns the leader's id and raft address.
func (b *Backend) Leader() (string, string) { return b.n.Leader() }

// VerifyLeader confirms leadership with a quorum.
func (b *Backend) VerifyLeader(ctx context.Context) error { return mapErr(b.n.VerifyLeader(ctx)) }

// LastIndex returns the last index of the raft log.
func (b *Backend) LastIndex() uint64 { return b.n.Raft().LastIndex() }

// Peers returns the raft configuration.
func (b *Backend) Peers(ctx context.Context) ([]server.Peer, error) {
	ms, err := b.n.Members(ctx)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]server.Peer, 0, len(ms))
	for _, m := range ms {
		out = append(out, server.Peer{ID: m.ID, Addr: m.Address, Suffrage: m.Suffrage})
	}
	return out, nil
}

// AddVoter adds a voting member.
func (b *Backend) AddVoter(ctx context.Context, id, addr string) error {
	return mapErr(b.n.AddVoter(ctx, id, addr))
}

// RemoveServer removes a member.
func (b *Backend) RemoveServer(ctx context.Context, id string) error {
	return mapErr(b.n.RemoveServer(ctx, id))
}

// Snapshot writes a user snapshot.
func (b *Backend) Snapshot(ctx context.Context, w io.Writer) error {
	_, err := b.n.Snapshot(ctx, w)
	return mapErr(err)
}

// Restore replaces the state with a snapshot.
func (b *Backend) Restore(ctx context.Context, r io.Reader) error {
	return mapErr(b.n.Restore(ctx, r))
}
