package raftnode

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
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
