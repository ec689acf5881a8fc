package controller

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestOnceWarnerLogsChangesOnly: a copy failure that repeats every pass is
// logged once, again when it changes, and its end once.
func TestOnceWarnerLogsChangesOnly(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var w onceWarner
	gone := errors.New("snapshot s-1: no replica holds it")
	other := errors.New("snapshot s-2: no replica holds it")
	var logged []bool
	for _, err := range []error{nil, gone, gone, gone, other, other, nil, nil, gone} {
		logged = append(logged, w.report(log, "copy etcd snapshot files", err))
	}
	want := []bool{false, true, false, false, true, false, true, false, true}
	for i := range want {
		if logged[i] != want[i] {
			t.Fatalf("logged %v, want %v:\n%s", logged, want, buf.String())
		}
	}
	if n := strings.Count(buf.String(), "s-1"); n != 2 {
		t.Errorf("s-1 failure logged %d times, want 2 (once per run of failures):\n%s", n, buf.String())
	}
}
