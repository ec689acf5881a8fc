package raftnode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/store"
)

// Snapshot makes raft take a snapshot now (or reuses the latest when
// nothing changed since) and writes it to w in the store's snapshot format.
// It returns the raft index the snapshot covers.
func (n *Node) Snapshot(ctx context.Context, w io.Writer) (uint64, error) {
	f := n.raft.Snapshot()
	err := n.wait(ctx, f)
	var meta *raft.SnapshotMeta
	var rc io.ReadCloser
	switch {
	case err == nil:
		meta, rc, err = f.Open()
	case errors.Is(err, raft.ErrNothingNewToSnapshot):
		meta, rc, err = n.openLatest()
	default:
		return 0, n.mapErr("snapshot", err)
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: open: %w", err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return 0, fmt.Errorf("snapshot: copy: %w", err)
	}
	return meta.Index, nil
}

func (n *Node) openLatest() (*raft.SnapshotMeta, io.ReadCloser, error) {
	list, err := n.snaps.List()
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, errors.New("no snapshot taken yet")
	}
	return n.snaps.Open(list[0].ID)
}

// Restore replaces the cluster's state with a snapshot written by
// Snapshot. Leader only. The whole snapshot is checked first (a newer
// schema is refused with store.ErrSchemaTooNew, a damaged one with
// store.ErrInvalid) so a bad file never reaches raft. The leader installs
// it and followers receive it by snapshot transfer; the membership is kept.
func (n *Node) Restore(ctx context.Context, r io.Reader) error {
	if !n.IsLeader() {
		id, addr := n.Leader()
		return &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("restore: read snapshot: %w", err)
	}
	if err := store.New(nil).Restore(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: int64(len(data))}
	done := make(chan error, 1)
	go func() { done <- n.raft.Restore(meta, bytes.NewReader(data), n.timeout(ctx)) }()
	select {
	case <-ctx.Done():
		return fmt.Errorf("restore: %w", ctx.Err())
	case err := <-done:
		if err != nil {
			return n.mapErr("restore", err)
		}
	}
	n.log.Warn("restored state from a user snapshot", "bytes", len(data))
	return nil
}
