package bench

import (
	"context"
	"sync"
	"time"
)

// op is one request of a load; seq counts the caller's requests.
type op func(ctx context.Context, seq int) error

// loadResult is what one load run measured inside its window.
type loadResult struct {
	ops  int
	errs int
	dur  time.Duration
	lats []time.Duration
}

// rate is acknowledged operations per second.
func (r loadResult) rate() float64 { return float64(r.ops) / r.dur.Seconds() }

// runLoad runs one goroutine per op in a closed loop for warmup+dur and
// keeps the operations that started and finished inside the window after
// warmup.
func runLoad(ctx context.Context, ops []op, warmup, dur time.Duration) loadResult {
	start := time.Now()
	from, to := start.Add(warmup), start.Add(warmup+dur)
	ctx, cancel := context.WithDeadline(ctx, to.Add(5*time.Second))
	defer cancel()
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	for _, o := range ops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats := make([]time.Duration, 0, 1024)
			errs := 0
			for seq := 0; ; seq++ {
				t0 := time.Now()
				if t0.After(to) || ctx.Err() != nil {
					break
				}
				err := o(ctx, seq)
				t1 := time.Now()
				if t0.Before(from) || t1.After(to) {
					continue
				}
				if err != nil {
					errs++
					continue
				}
				lats = append(lats, t1.Sub(t0))
			}
			mu.Lock()
			res.lats = append(res.lats, lats...)
			res.errs += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.ops = len(res.lats)
	res.dur = dur
	return res
}
