// Package gcbudget lets a process's garbage collector wait until its heap
// reaches a budget while the live heap is small, instead of collecting
// each time the heap doubles (Go's default, GOGC=100).
//
// After every collection it sets the GC percentage so that the next
// collection starts when the heap reaches the budget, or when it doubles
// the live heap if that is more: GOGC never goes below Go's default, so a
// live heap past half the budget is collected exactly as without it, and
// memory is never held back by a cap that could make the collector run
// back to back. A replicated store whose state is small for the machine
// spends less of its CPU marking it, and its writes wait less behind
// collections, for memory the budget names up front.
package gcbudget

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultBudget is the heap kcore-controller lets grow before it collects
// while its live heap is under half of it.
const DefaultBudget = 384 << 20

// maxPercent bounds the GC percentage at a tiny live heap (a process just
// started), where budget/live would be in the tens of thousands.
const maxPercent = 2000

// liveMetric is the heap the last collection found reachable.
const liveMetric = "/gc/heap/live:bytes"

// Tuner re-sets the GC percentage after every collection; Stop ends it.
type Tuner struct {
	budget uint64
	mu     sync.Mutex
	done   bool
	sample []metrics.Sample
	// percent is the last percentage set, for tests.
	percent int
}

// Start tunes the collector for budget bytes and returns the tuner, or nil
// when budget is 0 or the GOGC environment variable is set (the operator's
// choice wins).
func Start(budget uint64) *Tuner {
	if budget == 0 || os.Getenv("GOGC") != "" {
		return nil
	}
	t := &Tuner{budget: budget, sample: []metrics.Sample{{Name: liveMetric}}}
	t.tune()
	t.arm()
	return t
}

// Stop restores Go's default percentage; a nil tuner is a no-op.
func (t *Tuner) Stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	debug.SetGCPercent(100)
}

// sentinel is allocated once per cycle; its cleanup runs after the
// collection that finds it unreachable. It holds a pointer so it is never
// batched with other tiny objects.
type sentinel struct {
	_ *int
	_ [16]byte
}

// arm registers tune to run after the next collection.
func (t *Tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *Tuner) {
		if t.tune() {
			t.arm()
		}
	}, t)
}

// tune sets the percentage for the live heap the last collection found;
// it reports false once the tuner is stopped.
func (t *Tuner) tune() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return false
	}
	metrics.Read(t.sample)
	live := uint64(0)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	t.percent = Percent(t.budget, live)
	debug.SetGCPercent(t.percent)
	return true
}

// Percent is the GC percentage whose heap goal is budget for a live heap
// of live bytes: never below Go's default 100, never above maxPercent.
func Percent(budget, live uint64) int {
	if live == 0 || budget <= 2*live {
		return 100
	}
	p := (budget - live) * 100 / live
	return int(min(p, maxPercent))
}
