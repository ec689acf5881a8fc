package harness

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// testLogger returns a logger that writes records at level and above
// through t.Log, so they show only for failing tests, and goes silent once
// closed is set (after the test's replicas are shut down).
func testLogger(t testing.TB, level slog.Level, closed *atomic.Bool) *slog.Logger {
	w := writerFunc(func(p []byte) (int, error) {
		if !closed.Load() {
			t.Log(strings.TrimRight(string(p), "\n"))
		}
		return len(p), nil
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
