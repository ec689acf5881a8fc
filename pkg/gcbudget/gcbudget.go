// Package gcbudget lets a process's garbage collector wait until its heap
// reaches a budget while the live heap is small, instead of collecting
// each time the heap doubles (Go's default, GOGC=100).
//
// After every collection it sets the GC percentage so that the runtime's
// next heap goal is the budget, or Go's default goal if that is more. The
// goal counts the goroutine stacks and globals the collector scans as Go
// counts them, so a process with many connections (each a few stacks) is
// held to the budget as well. While the percentage is raised the budget is
// also the runtime's memory limit, so a heap that grows faster than the
// percentage is re-set (thousands of agents joining at once) is still
// collected at the budget. GOGC never goes below Go's default and the limit
// is lifted once Go's default goal is past the budget, so a larger live
// heap is collected exactly as without it. A replicated store whose state
// is small for the machine spends less of its CPU marking it, and its
// writes wait less behind collections, for memory the budget names up
// front.
package gcbudget

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultBudget is the heap kcore-controller lets grow before it collects
// while Go's default would collect sooner.
const DefaultBudget = 384 << 20

// maxPercent bounds the GC percentage at a tiny live heap (a process just
// started), where budget/live would be in the tens of thousands.
const maxPercent = 2000

// The runtime metrics the heap goal is computed from: the heap the last
// collection found reachable, and the stacks and globals it scanned.
const (
	liveMetric    = "/gc/heap/live:bytes"
	stackMetric   = "/gc/scan/stack:bytes"
	globalsMetric = "/gc/scan/globals:bytes"
)

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
// when budget is 0 or the GOGC or GOMEMLIMIT environment variable is set
// (the operator's choice wins).
func Start(budget uint64) *Tuner {
	if budget == 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	t := &Tuner{budget: budget, sample: []metrics.Sample{{Name: liveMetric}, {Name: stackMetric}, {Name: globalsMetric}}}
	t.tune()
	t.arm()
	return t
}

// Stop restores Go's default percentage and no memory limit; a nil tuner
// is a no-op.
func (t *Tuner) Stop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done = true
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
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
	var v [3]uint64
	for i, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	t.percent = Percent(t.budget, v[0], v[1]+v[2])
	debug.SetGCPercent(t.percent)
	// While the percentage is raised, the budget is also the runtime's
	// memory limit: a heap that grows fast (thousands of agents joining)
	// is collected at the budget even before this runs again after the
	// next collection. At the default percentage there is no limit.
	limit := int64(math.MaxInt64)
	if t.percent > 100 {
		limit = int64(t.budget)
	}
	debug.SetMemoryLimit(limit)
	return true
}

// Percent is the GC percentage whose heap goal is budget for a live heap
// of live bytes and scan bytes of stacks and globals, as the runtime
// computes the goal: live + (live + scan) × percent / 100. It is never
// below Go's default 100 and never above maxPercent.
func Percent(budget, live, scan uint64) int {
	if live == 0 || budget <= 2*live+scan {
		return 100
	}
	p := (budget - live) * 100 / (live + scan)
	return int(min(p, maxPercent))
}
