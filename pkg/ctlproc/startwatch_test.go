package ctlproc

import (
	"bytes"
	"strings"
	"testing"
)

// TestStartWatchFindsSplitLine feeds the start line in pieces, after other
// output, and checks the addresses come out once and the log gets every
// byte.
func TestStartWatchFindsSplitLine(t *testing.T) {
	var log bytes.Buffer
	w := newStartWatch(&log)
	out := "time=x level=INFO msg=\"raft node started\" addr=127.0.0.1:9\n" +
		`time=x level=INFO msg="controller replica started" id=r0 api=127.0.0.1:4001 raft=127.0.0.1:4002 bootstrap=true join=[]` + "\n" +
		`time=x level=INFO msg="controller replica started" id=r0 api=127.0.0.1:5001 raft=127.0.0.1:5002` + "\n"
	for i := 0; i < len(out); i += 7 {
		if _, err := w.Write([]byte(out[i:min(i+7, len(out))])); err != nil {
			t.Fatal(err)
		}
	}
	if log.String() != out {
		t.Fatalf("log = %q, want %q", log.String(), out)
	}
	select {
	case a := <-w.addrs:
		if a.api != "127.0.0.1:4001" || a.raft != "127.0.0.1:4002" {
			t.Fatalf("addrs = %+v, want the first start line's", a)
		}
	default:
		t.Fatal("start line not found")
	}
	select {
	case a := <-w.addrs:
		t.Fatalf("second report %+v", a)
	default:
	}
}

// TestStartWatchLineBound checks a partial line of maxWatchedLine bytes is
// kept (and found once complete) while a longer one is dropped.
func TestStartWatchLineBound(t *testing.T) {
	line := `msg="controller replica started" api=127.0.0.1:1 raft=127.0.0.1:2 pad=`
	for _, tc := range []struct {
		size  int
		found bool
	}{{maxWatchedLine, true}, {maxWatchedLine + 1, false}} {
		w := newStartWatch(&bytes.Buffer{})
		partial := line + strings.Repeat("x", tc.size-len(line))
		if _, err := w.Write([]byte(partial)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.addrs:
			if !tc.found {
				t.Fatalf("size %d: a line over the bound was searched", tc.size)
			}
		default:
			if tc.found {
				t.Fatalf("size %d: a line at the bound was not found", tc.size)
			}
		}
	}
}
