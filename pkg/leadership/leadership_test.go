package leadership

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunFollowsLeadership: true starts one run (a second true does not
// start another), false cancels it, a run that returned on its own is
// started again by the next true, and closing the channel stops the run
// and returns.
func TestRunFollowsLeadership(t *testing.T) {
	var starts, active atomic.Int32
	quit := make(chan struct{}, 1)
	run := func(ctx context.Context) {
		starts.Add(1)
		active.Add(1)
		defer active.Add(-1)
		select {
		case <-ctx.Done():
		case <-quit:
		}
	}
	ch := make(chan bool)
	returned := make(chan struct{})
	go func() { Run(context.Background(), ch, run); close(returned) }()

	ch <- true
	ch <- true
	waitFor(t, "one run", func() bool { return active.Load() == 1 })
	if starts.Load() != 1 {
		t.Fatalf("two trues started %d runs", starts.Load())
	}
	ch <- false
	waitFor(t, "the run cancelled", func() bool { return active.Load() == 0 })

	ch <- true
	waitFor(t, "a second run", func() bool { return starts.Load() == 2 && active.Load() == 1 })
	quit <- struct{}{}
	waitFor(t, "the run to return on its own", func() bool { return active.Load() == 0 })
	// The run's return (active back to 0) comes an instant before Run can
	// see it: a true in between is taken for one more true of the running
	// call and dropped, as it should be. So the true is repeated until a
	// third run starts; once it has, more trues start nothing.
	waitFor(t, "a run after the one that returned", func() bool {
		if starts.Load() == 3 && active.Load() == 1 {
			return true
		}
		select {
		case ch <- true:
		default:
		}
		return false
	})
	if starts.Load() != 3 {
		t.Fatalf("%d runs started, want 3", starts.Load())
	}

	close(ch)
	<-returned
	if active.Load() != 0 {
		t.Fatal("Run returned with its run still going")
	}
}
