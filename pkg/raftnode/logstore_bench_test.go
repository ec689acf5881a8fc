package raftnode

import (
	"fmt"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

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
