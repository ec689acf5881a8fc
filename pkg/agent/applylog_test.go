package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// levelCounter is a slog handler that counts the records of one message
// by level.
type levelCounter struct {
	msg string
	mu  sync.Mutex
	by  map[slog.Level]int
}

func (c *levelCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *levelCounter) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *levelCounter) WithGroup(string) slog.Handler            { return c }

func (c *levelCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == c.msg {
		c.mu.Lock()
		c.by[r.Level]++
		c.mu.Unlock()
	}
	return nil
}

func (c *levelCounter) count(l slog.Level) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.by[l]
}

// A unit that stays pending is re-applied every retry, but only the first
// apply that finds it so is logged at Info; the retries that change
// nothing are logged at Debug.
func TestAgentLogsUnchangedAppliesAtDebug(t *testing.T) {
	root, ctl, sup := testNode(t)
	logs := &levelCounter{msg: "applied", by: map[slog.Level]int{}}
	a := &Agent{
		NodeID: "node-105",
		Root:   root,
		Log:    slog.New(logs),
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder(), UnitSettle: 10 * time.Millisecond,
			Health: func(context.Context, string) error { return errors.New("not yet") }},
		Join: func(context.Context) (Credentials, error) {
			return Credentials{Cert: []byte("CERT"), Key: []byte("KEY"), CA: []byte("CA")}, nil
		},
		Connect:         func(context.Context, Credentials, *CertSource) (Controller, error) { return ctl, nil },
		RetryInterval:   10 * time.Millisecond,
		PendingInterval: 10 * time.Millisecond,
		BackoffMax:      20 * time.Millisecond,
	}
	u := helperUnit("kcore-kube-apiserver", "serve", "a1")
	u.HealthURL = "https://127.0.0.1:6443/readyz"
	ctl.set(api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 1, Units: []api.Unit{u}})
	runAgent(t, a)

	waitFor(t, "five applies that leave the unit pending", func() bool { return logs.count(slog.LevelDebug) >= 5 })
	// The first apply may find the unit starting, the next pending.
	if n := logs.count(slog.LevelInfo); n < 1 || n > 2 {
		t.Errorf("%d applies logged at Info while the unit stayed pending, want 1 or 2", n)
	}
}
