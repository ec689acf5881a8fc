package replication

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// BenchmarkReplicatedPut measures acknowledged puts through a 3-replica
// cluster from parallel writers (raft batches concurrent entries into one
// log write). It reports writes/s.
func BenchmarkReplicatedPut(b *testing.B) {
	c := harness.New(b, harness.Options{Replicas: 3})
	leader := c.WaitLeader().Node()
	var seq atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			cmd, err := store.Put{Kind: itemKind, Name: fmt.Sprintf("b-%09d", i), Data: json.RawMessage(`{"v":1}`)}.Command()
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := leader.Apply(context.Background(), cmd); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
