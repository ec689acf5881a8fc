package controller

import (
	"bytes"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"kcore.dev/kcore/pkg/server"
)

func TestWarnFDLimitAtTheBound(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	raft := RaftLimits{MaxConns: 10}
	fits := int(lim.Cur) - fdReserve - raft.MaxConns
	if fits <= 0 {
		t.Skipf("file descriptor limit %d below the reserve", lim.Cur)
	}
	for _, tt := range []struct {
		apiConns int
		warn     bool
	}{{fits, false}, {fits + 1, true}} {
		var out bytes.Buffer
		warnFDLimit(slog.New(slog.NewTextHandler(&out, nil)), server.Limits{MaxConns: tt.apiConns}, raft)
		if got := strings.Contains(out.String(), "file descriptor limit below"); got != tt.warn {
			t.Fatalf("api caps %d with limit %d: warned %v, want %v (%s)", tt.apiConns, lim.Cur, got, tt.warn, out.String())
		}
	}
}
