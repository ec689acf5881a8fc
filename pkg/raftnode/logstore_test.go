package raftnode

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
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
