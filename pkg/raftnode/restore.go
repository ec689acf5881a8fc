package raftnode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/store"
)

// Bounds of a user snapshot being restored: what Restore buffers in memory
// besides the state the snapshot describes.
const (
	// MaxSnapshotHeader bounds a snapshot's first line, its header, in
	// bytes with its newline.
	MaxSnapshotHeader = 1 << 20
	// MaxSnapshotLine bounds every later line, which holds one object (in
	// bytes with its newline):
	// twice the API's request body limit, from which objects come (a sealed
	// secret grows by a third in base64).
	MaxSnapshotLine = 8 << 20
)

// Restore replaces the cluster's state with a snapshot written by
// Snapshot. Leader only. It reads r once, as a stream: the header line is
// checked first (a newer schema is refused with store.ErrSchemaTooNew,
// anything that is not a snapshot header with store.ErrInvalid), then
// every object is checked as it is copied to a file in the data dir, a
// line longer than MaxSnapshotLine refused with store.ErrInvalid. So a bad
// upload is refused as soon as it goes wrong, with bounded memory, and
// never reaches raft. The leader installs the file and followers receive
// it by snapshot transfer; the membership is kept.
func (n *Node) Restore(ctx context.Context, r io.Reader) error {
	if !n.IsLeader() {
		id, addr := n.Leader()
		return &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
	}
	br := bufio.NewReader(r)
	head, err := readHeaderLine(br)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if _, err := store.ReadSnapshotHeader(bytes.NewReader(head)); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	f, err := os.CreateTemp(n.cfg.DataDir, "restore-*.snap")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	release := func() {
		f.Close()
		os.Remove(f.Name())
	}
	body := io.MultiReader(bytes.NewReader(head), &lineLimit{r: br, max: MaxSnapshotLine})
	if err := store.New(nil).Restore(io.TeeReader(body, f)); err != nil {
		release()
		return fmt.Errorf("restore: %w", err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		release()
		return fmt.Errorf("restore: rewind snapshot file: %w", err)
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: size}
	done := make(chan error, 1)
	go func() {
		defer release()
		done <- n.raft.Restore(meta, f, n.timeout(ctx))
	}()
	select {
	case <-ctx.Done():
		return fmt.Errorf("restore: %w", ctx.Err())
	case err := <-done:
		if err != nil {
			return n.mapErr("restore", err)
		}
	}
	n.log.Warn("restored state from a user snapshot", "bytes", size)
	return nil
}

// readHeaderLine reads a snapshot's first line, at most MaxSnapshotHeader
// bytes of it.
func readHeaderLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxSnapshotHeader {
			return nil, fmt.Errorf("read snapshot header: no line end in %d bytes: %w", MaxSnapshotHeader, store.ErrInvalid)
		}
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return line, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, fmt.Errorf("read snapshot header: %w", err)
		}
	}
}

// lineLimit fails a read once a line (its newline included) passes max
// bytes, so a decoder reading one line's value buffers at most max bytes.
type lineLimit struct {
	r   io.Reader
	max int
	cur int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if l.cur++; l.cur > l.max {
			return 0, fmt.Errorf("read snapshot: a line longer than %d bytes: %w", l.max, store.ErrInvalid)
		}
		if b == '\n' {
			l.cur = 0
		}
	}
	return n, err
}
