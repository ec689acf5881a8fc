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
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies committed entries in order, in one store transaction
// (store.State.ApplyBatch): raft hands over up to MaxAppendEntries entries
// at a time under load.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	entries := make([]store.Entry, 0, len(logs))
	at := make([]int, 0, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		cmd, err := store.DecodeCommand(l.Data)
		if err != nil {
			f.log.Error("refusing undecodable log entry", "index", l.Index, "err", err)
			out[i] = store.Result{Index: l.Index, Err: fmt.Errorf("apply entry %d: %w", l.Index, err)}
			continue
		}
		entries = append(entries, store.Entry{Index: l.Index, Cmd: cmd})
		at = append(at, i)
	}
	for j, r := range f.state.ApplyBatch(entries) {
		out[at[j]] = r
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
