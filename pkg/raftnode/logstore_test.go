package raftnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/hashicorp/raft-wal/metadb"
)

func TestChunkedLogStoreDeletesWholeRange(t *testing.T) {
	const last = 3*deleteChunk + 10
	tests := []struct {
		name      string
		lo, hi    uint64
		wantFirst uint64
	}{
		{"one chunk", 1, 100, 101},
		{"exactly one chunk", 1, deleteChunk, deleteChunk + 1},
		{"several chunks", 1, 3*deleteChunk + 5, 3*deleteChunk + 6},
		{"empty range", 5, 4, 1},
		{"beyond the log", 1, last + 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(t.TempDir(), "raft.db"), BoltOptions: boltOptions()})
			if err != nil {
				t.Fatal(err)
			}
			defer bs.Close()
			s := chunkedLogStore{bs}
			var logs []*raft.Log
			for i := uint64(1); i <= last; i++ {
				logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte("x")})
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteRange(tt.lo, tt.hi); err != nil {
				t.Fatal(err)
			}
			first, err := s.FirstIndex()
			if err != nil || first != tt.wantFirst {
				t.Fatalf("FirstIndex = %d, %v; want %d", first, err, tt.wantFirst)
			}
			if tt.wantFirst > 1 {
				var l raft.Log
				if err := s.GetLog(tt.wantFirst-1, &l); !errors.Is(err, raft.ErrLogNotFound) {
					t.Fatalf("entry %d still there: %v", tt.wantFirst-1, err)
				}
			}
		})
	}
}

// BenchmarkLogStoreAppend appends batches of 1 KiB entries, as the leader
// writes a batch of commands, to each log store with fsync on; b.N counts
// entries. Run both kinds in one invocation to compare them.
func BenchmarkLogStoreAppend(b *testing.B) {
	data := make([]byte, 1024)
	for _, batch := range []int{1, 64, 256} {
		for _, kind := range []string{LogStoreBolt, LogStoreWAL} {
			b.Run(fmt.Sprintf("%s/batch=%d", kind, batch), func(b *testing.B) {
				dir := b.TempDir()
				s, logs, err := openLogStore(dir, kind, false, hclog.NewNullLogger())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				next := uint64(1)
				b.SetBytes(int64(len(data)))
				b.ResetTimer()
				for done := 0; done < b.N; {
					n := min(batch, b.N-done)
					entries := make([]*raft.Log, n)
					for i := range entries {
						entries[i] = &raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: data}
						next++
					}
					if err := logs.StoreLogs(entries); err != nil {
						b.Fatal(err)
					}
					done += n
				}
			})
		}
	}
}

// TestWALSuffixClearedSurvivesRestart is what raft does to a follower whose
// log has entries a new leader never had ("clearing log suffix": DeleteRange
// up to the last index, then the leader's entries), followed by a restart.
// The WAL seals its tail segment when the suffix goes; raft-wal before
// v0.4.1 sealed it without writing its index block, and the restarted
// replica could read none of its entries (found by the chaos runs: a
// replica killed after such a truncation never started again).
func TestWALSuffixClearedSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	open := func() logStore {
		s, _, err := openLogStore(dir, LogStoreWAL, false, hclog.NewNullLogger())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	entries := func(from, to, term uint64) []*raft.Log {
		var out []*raft.Log
		for i := from; i <= to; i++ {
			out = append(out, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: fmt.Appendf(nil, "%d@%d", i, term)})
		}
		return out
	}
	s := open()
	if err := s.StoreLogs(entries(1, 10, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(9, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(entries(9, 12, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open()
	defer s.Close()
	for i := uint64(1); i <= 12; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d after the restart: %v", i, err)
		}
		term := uint64(1)
		if i >= 9 {
			term = 2
		}
		if l.Term != term || string(l.Data) != fmt.Sprintf("%d@%d", i, term) {
			t.Fatalf("entry %d: term %d data %q, want term %d", i, l.Term, l.Data, term)
		}
	}
}

// TestWALSealedWithoutIndexRefused: a data dir the old raft-wal left with a
// sealed segment and no index block is refused at open with a message that
// says what to do, instead of the panic raft gives reading it.
func TestWALSealedWithoutIndexRefused(t *testing.T) {
	dir := t.TempDir()
	s, _, err := openLogStore(dir, LogStoreWAL, false, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand}, {Index: 2, Term: 1, Type: raft.LogCommand}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(2, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// What v0.4.0 recorded: the truncated tail sealed, its index not written.
	meta := &metadb.BoltMetaDB{}
	walPath := filepath.Join(dir, walDir)
	st, err := meta.Load(walPath)
	if err != nil {
		t.Fatal(err)
	}
	sealed := 0
	for i := range st.Segments {
		if !st.Segments[i].SealTime.IsZero() {
			st.Segments[i].IndexStart = 0
			sealed++
		}
	}
	if sealed == 0 {
		t.Fatalf("no sealed segment to damage: %+v", st.Segments)
	}
	if err := errors.Join(meta.CommitState(st), meta.Close()); err != nil {
		t.Fatal(err)
	}
	if s, _, err := openLogStore(dir, LogStoreWAL, false, hclog.NewNullLogger()); !errors.Is(err, ErrSealedWithoutIndex) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("open = %v, want ErrSealedWithoutIndex", err)
	}
	// Refused without harm: the log is left where it was.
	if _, err := os.Stat(walPath); err != nil {
		t.Fatal(err)
	}
}
