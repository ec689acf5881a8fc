package raftnode

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestHCLogAdapterRoutesToSlog(t *testing.T) {
	var buf bytes.Buffer
	l := newHCLog(slog.New(slog.NewTextHandler(&buf, nil)), slog.LevelWarn).Named("raft").With("k", "v")
	l.Info("dropped")
	l.Debug("dropped too")
	l.Warn("kept", "a", 1)
	l.Error("also kept")
	l.StandardLogger(nil).Print("std dropped")
	out := buf.String()
	if strings.Contains(out, "dropped") {
		t.Fatalf("below-level records logged:\n%s", out)
	}
	for _, want := range []string{"level=WARN msg=kept logger=raft k=v a=1", "level=ERROR msg=\"also kept\""} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in:\n%s", want, out)
		}
	}
	if !l.IsWarn() || l.IsInfo() {
		t.Fatal("level predicates disagree with the minimum level")
	}
}
