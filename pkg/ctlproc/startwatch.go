package ctlproc

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"

	"kcore.dev/kcore/pkg/controller"
)

// maxWatchedLine bounds the partial line startWatch buffers; longer lines
// are passed through to the log but not searched.
const maxWatchedLine = 64 << 10

// boundAddrs are the addresses a replica logged with controller.LogStarted.
type boundAddrs struct {
	api, raft string
}

// startWatch copies a replica's output to its log and reports the
// addresses of its controller.LogStarted line once.
type startWatch struct {
	out   io.Writer
	addrs chan boundAddrs

	mu      sync.Mutex
	found   bool
	partial []byte
}

func newStartWatch(out io.Writer) *startWatch {
	return &startWatch{out: out, addrs: make(chan boundAddrs, 1)}
}

// Write copies p to the log and searches its complete lines.
func (w *startWatch) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found {
		return n, err
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if a, ok := parseStarted(string(w.partial[:i])); ok {
			w.found, w.partial = true, nil
			w.addrs <- a
			return n, err
		}
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxWatchedLine {
		w.partial = nil
	}
	return n, err
}

// parseStarted reads the api and raft values of a text-handler slog line
// whose message is controller.LogStarted.
func parseStarted(line string) (boundAddrs, bool) {
	if !strings.Contains(line, "msg="+strconv.Quote(controller.LogStarted)) {
		return boundAddrs{}, false
	}
	var a boundAddrs
	for f := range strings.FieldsSeq(line) {
		if v, ok := strings.CutPrefix(f, "api="); ok {
			a.api = v
		} else if v, ok := strings.CutPrefix(f, "raft="); ok {
			a.raft = v
		}
	}
	return a, a.api != "" && a.raft != ""
}
