package execrun

import (
	"context"
	"fmt"
	"sync"
)

// Response is one scripted answer of a Recorder.
type Response struct {
	Result Result
	Err    error
}

// Recorder is a Runner for tests: it records every argv and answers from a
// script keyed by the joined argv. Several responses queued for one command
// are returned in order, the last one repeating. Unscripted commands succeed
// with empty output, unless Missing names their binary (then they fail with
// ErrNotFound).
type Recorder struct {
	mu      sync.Mutex
	calls   [][]string
	script  map[string][]Response
	missing map[string]bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{script: map[string][]Response{}, missing: map[string]bool{}}
}

// On queues a response for the command whose joined argv is cmd.
func (r *Recorder) On(cmd string, res Result, err error) *Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script[cmd] = append(r.script[cmd], Response{Result: res, Err: err})
	return r
}

// OnStdout queues a successful response printing stdout.
func (r *Recorder) OnStdout(cmd, stdout string) *Recorder {
	return r.On(cmd, Result{Stdout: []byte(stdout)}, nil)
}

// OnExit queues a response exiting with code (returned as an *ExitError).
func (r *Recorder) OnExit(cmd string, code int, stderr string) *Recorder {
	res := Result{ExitCode: code, Stderr: []byte(stderr)}
	return r.On(cmd, res, &ExitError{Argv: []string{cmd}, Result: res})
}

// Missing makes every command whose argv[0] is bin fail with ErrNotFound.
func (r *Recorder) Missing(bin string) *Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.missing[bin] = true
	return r
}

// Run implements Runner.
func (r *Recorder) Run(_ context.Context, argv []string, _ ...Option) (Result, error) {
	if len(argv) == 0 {
		return Result{}, ErrEmptyArgv
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, append([]string{}, argv...))
	if r.missing[argv[0]] {
		return Result{ExitCode: -1}, fmt.Errorf("look up %s: %w", argv[0], ErrNotFound)
	}
	key := Join(argv)
	q := r.script[key]
	if len(q) == 0 {
		return Result{}, nil
	}
	resp := q[0]
	if len(q) > 1 {
		r.script[key] = q[1:]
	}
	return resp.Result, resp.Err
}

// Calls returns every recorded argv in order.
func (r *Recorder) Calls() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]string, len(r.calls))
	copy(out, r.calls)
	return out
}

// Commands returns every recorded argv joined into one line, in order.
func (r *Recorder) Commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.calls))
	for _, c := range r.calls {
		out = append(out, Join(c))
	}
	return out
}

// Reset forgets the recorded calls (the script stays).
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}
