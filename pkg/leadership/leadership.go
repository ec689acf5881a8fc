// Package leadership runs work only while this controller replica leads:
// the orchestrator and the git sources both follow the raft leader this way.
package leadership

import "context"

// Run calls run in its own goroutine each time leaderCh says this replica
// leads and nothing is running, and cancels it (waiting for it to return)
// when leaderCh says it no longer leads. It returns when ctx ends or
// leaderCh closes, after stopping what runs. A run that returned on its own
// is started again by the next true.
func Run(ctx context.Context, leaderCh <-chan bool, run func(context.Context)) {
	var cur *running
	defer func() { cur.stop() }()
	for {
		select {
		case <-ctx.Done():
			return
		case leader, ok := <-leaderCh:
			if !ok {
				return
			}
			if !leader {
				cur.stop()
				cur = nil
				continue
			}
			if cur != nil && !cur.finished() {
				continue
			}
			cur = start(ctx, run)
		}
	}
}

// running is one call of run.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func start(ctx context.Context, run func(context.Context)) *running {
	rctx, cancel := context.WithCancel(ctx)
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		run(rctx)
	}()
	return r
}

// finished reports whether the call returned.
func (r *running) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// stop cancels the call and waits for it; nil is a no-op.
func (r *running) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}
