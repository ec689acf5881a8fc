package raftnode

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/hashicorp/raft"

	"kcore.dev/kcore/pkg/store"
)

// fsm adapts store.State to raft.BatchingFSM. It only decodes entries and
// dispatches them; every rule lives in the store's processor.
type fsm struct {
	state *store.State
	log   *slog.Logger
}

// Apply applies one committed entry.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	cmd, err := store.DecodeCommand(l.Data)
	if err != nil {
		f.log.Error("refusing undecodable log entry", "index", l.Index, "err", err)
		return store.Result{Index: l.Index, Err: fmt.Errorf("apply entry %d: %w", l.Index, err)}
	}
	return f.state.Apply(l.Index, cmd)
}

// ApplyBatch applies committed entries in order.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	for i, l := range logs {
		out[i] = f.Apply(l)
	}
	return out
}

// Snapshot captures the state; Persist writes it while Apply goes on.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{snap: f.state.Snapshot()}, nil
}

// Restore replaces the state with a snapshot.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.state.Restore(rc); err != nil {
		f.log.Error("refusing snapshot", "err", err)
		return err
	}
	return nil
}

type fsmSnapshot struct {
	snap *store.Snapshot
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.snap.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}
