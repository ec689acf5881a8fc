package gcbudget

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		budget, live, scan uint64
		want               int
	}{
		{256 * mib, 64 * mib, 0, 300},         // goal 64 × 4 = 256
		{256 * mib, 128 * mib, 0, 100},        // half the budget: Go's default
		{256 * mib, 200 * mib, 0, 100},        // past half: never below the default
		{256 * mib, 1000 * mib, 0, 100},       // past the budget: the default, no cap
		{256 * mib, 100 * mib, 0, 156},        // 100 × 2.56 = 256
		{256 * mib, 1 * mib, 0, maxPercent},   // a process just started
		{256 * mib, 0, 0, 100},                // nothing measured yet
		{256 * mib, 64 * mib, 64 * mib, 150},  // stacks: 64 + 128 × 1.5 = 256
		{256 * mib, 64 * mib, 128 * mib, 100}, // the default goal is the budget
		{256 * mib, 1 * mib, 99 * mib, 255},   // many connections, little heap
	} {
		if got := Percent(tt.budget, tt.live, tt.scan); got != tt.want {
			t.Errorf("Percent(%d MiB, %d MiB, %d MiB) = %d, want %d", tt.budget/mib, tt.live/mib, tt.scan/mib, got, tt.want)
		}
	}
}

func TestStartLeavesAnOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "100")
	if tu := Start(DefaultBudget); tu != nil {
		tu.Stop()
		t.Fatal("Start tuned the collector though GOGC is set")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if tu := Start(DefaultBudget); tu != nil {
		tu.Stop()
		t.Fatal("Start tuned the collector though GOMEMLIMIT is set")
	}
	t.Setenv("GOMEMLIMIT", "")
	if tu := Start(0); tu != nil {
		tu.Stop()
		t.Fatal("Start tuned the collector for a budget of 0")
	}
}

// limitNow reads the current memory limit.
func limitNow() int64 { return debug.SetMemoryLimit(-1) }

// percentNow reads the current GC percentage.
func percentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitPercent collects until the tuner has run after a collection and
// the percentage satisfies ok, or 200 collections passed.
func waitPercent(ok func(int) bool) (int, error) {
	for range 200 {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // the cleanup goroutine runs after the collection
		if p := percentNow(); ok(p) {
			return p, nil
		}
	}
	return percentNow(), errors.New("the percentage never changed")
}

// TestTunerFollowsTheLiveHeap: with a small live heap the next collection
// waits for the budget; once the live heap passes half of it, Go's default
// applies again; after Stop the default stays.
func TestTunerFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	const budget = 256 << 20
	tu := Start(budget)
	if tu == nil {
		t.Fatal("Start returned no tuner")
	}
	defer tu.Stop()
	if p, err := waitPercent(func(p int) bool { return p > 100 }); err != nil {
		t.Fatalf("small live heap: percentage %d: %v", p, err)
	}
	if l := limitNow(); l != budget {
		t.Fatalf("small live heap: memory limit %d, want the budget %d", l, budget)
	}
	big := make([]byte, 200<<20)
	for i := range big {
		big[i] = byte(i)
	}
	if p, err := waitPercent(func(p int) bool { return p == 100 }); err != nil {
		t.Fatalf("live heap past half the budget: percentage %d: %v", p, err)
	}
	if l := limitNow(); l != math.MaxInt64 {
		t.Fatalf("live heap past half the budget: memory limit %d, want none", l)
	}
	runtime.KeepAlive(big)
	tu.Stop()
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if p := percentNow(); p != 100 {
		t.Fatalf("after Stop the percentage is %d, want 100", p)
	}
}

// deepStack grows the calling goroutine's stack by about n KiB, signals
// ready and waits for release.
func deepStack(n int, ready chan<- struct{}, release <-chan struct{}) byte {
	var pad [1024]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		ready <- struct{}{}
		<-release
		return pad[0]
	}
	return deepStack(n-1, ready, release) + pad[n%len(pad)]
}

// heapGoal is the runtime's current heap goal.
func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGoalCountsStacks: with a small heap and many deep goroutine stacks
// (a server with many connections), the percentage counts the stacks, so
// the heap goal it sets is the budget, not the budget plus the stacks
// multiplied by the percentage; and the runtime's goal, which the memory
// limit also bounds, stays within the budget.
func TestGoalCountsStacks(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	const budget = 96 << 20
	ready, release := make(chan struct{}), make(chan struct{})
	const goroutines, kib = 1000, 48
	for range goroutines {
		go deepStack(kib, ready, release)
		<-ready
	}
	defer close(release)
	tu := Start(budget)
	if tu == nil {
		t.Fatal("Start returned no tuner")
	}
	defer tu.Stop()
	// The stacks alone are half the budget: a percentage that counts
	// them is at most budget / stacks × 100 = 200.
	p, err := waitPercent(func(p int) bool { return p > 100 && p <= 200 })
	if err != nil {
		t.Fatalf("percentage %d with a %d MiB budget and %d goroutines of %d KiB stacks: %v", p, budget>>20, goroutines, kib, err)
	}
	if goal := heapGoal(); goal > budget {
		t.Fatalf("heap goal %d MiB past the %d MiB budget (percentage %d)", goal>>20, budget>>20, p)
	}
}

// TestControllerDocNamesTheDefault: docs/controller.md says the budget's
// default as this package has it.
func TestControllerDocNamesTheDefault(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "controller.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("`--gc-budget-mib`\n(default %d)", DefaultBudget>>20)
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/controller.md does not say %q", want)
	}
}
