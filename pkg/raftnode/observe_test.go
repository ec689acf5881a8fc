package raftnode

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log sink raft's goroutines and the test share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLogsLeaderTerm: a node that becomes leader logs "became raft leader" with
// the term it leads in, which tests/chaos checks across replicas.
func TestLogsLeaderTerm(t *testing.T) {
	var logs lockedBuffer
	cfg := testConfig(t, "solo", t.TempDir(), true)
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	waitLeaderCh(t, n.LeaderCh())
	msg := "msg=" + strconv.Quote(LogBecameLeader)
	term := " term=" + strconv.FormatUint(n.raft.CurrentTerm(), 10)
	logged := func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, msg) && strings.HasSuffix(line, term) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !logged() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s line with%s in:\n%s", msg, term, logs.String())
		}
		<-tick.C
	}
}
