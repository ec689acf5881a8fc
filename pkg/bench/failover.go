package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

// failoverWriters is how many writers keep the write load during a failover.
const failoverWriters = 4

// ack is one acknowledged write.
type ack struct {
	start, end time.Time
}

// failoverFigures kills the leader process (SIGKILL) under a write load
// runs times and measures the time from the kill to the first
// acknowledged write sent after it.
func failoverFigures(ctx context.Context, p *procCluster, admin *client.Client, auth *authority, runs int, progress func(string)) ([]Figure, error) {
	cfg, err := auth.clientConfig(p.addrs(), apiv1.RoleClusterAdmin, "bench-failover")
	if err != nil {
		return nil, err
	}
	cfg.ElectionWait = -1
	cfg.Timeout = 2 * time.Second
	cfg.DialTimeout = 500 * time.Millisecond
	var secs []float64
	for r := range runs {
		d, err := failoverOnce(ctx, p, admin, cfg)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("failover run %d: %s", r+1, d.Round(time.Millisecond)))
		secs = append(secs, d.Seconds())
	}
	f := measured("5a", "failover: leader SIGKILLed, time to next acknowledged write", "s", secs)
	f = f.withTarget("< 2.5 s", *f.Value < 2.5)
	f = f.withNote(fmt.Sprintf("%d writers (own client each, all three addresses, retry every 10 ms, no client back-off) on 3 kcore-controller processes with raft's default timeouts", failoverWriters))
	return []Figure{f}, nil
}

func failoverOnce(ctx context.Context, p *procCluster, admin *client.Client, cfg client.Config) (time.Duration, error) {
	if err := poll(ctx, readyTimeout, func() error { return p.healthy(ctx, admin, 3) }); err != nil {
		return 0, fmt.Errorf("failover: cluster not healthy: %w", err)
	}
	leader, _, err := p.leader(ctx, admin)
	if err != nil {
		return 0, err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	var acks []ack
	var wg sync.WaitGroup
	body := json.RawMessage(payload1K())
	for i := range failoverWriters {
		c, err := client.New(cfg)
		if err != nil {
			return 0, fmt.Errorf("failover: %w", err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; wctx.Err() == nil; seq++ {
				start := time.Now()
				_, err := c.Put(wctx, benchKind, fmt.Sprintf("f%d-%02d", i, seq%keysPerWriter), body, nil)
				if err == nil {
					mu.Lock()
					acks = append(acks, ack{start: start, end: time.Now()})
					mu.Unlock()
					continue
				}
				t := time.NewTimer(10 * time.Millisecond)
				select {
				case <-wctx.Done():
					t.Stop()
				case <-t.C:
				}
			}
		}()
	}
	defer wg.Wait()
	defer stop()
	// Two seconds of steady load before the kill.
	if err := sleepCtx(ctx, 2*time.Second); err != nil {
		return 0, err
	}
	killed := time.Now()
	leader.kill()
	var got time.Duration
	err = poll(ctx, 30*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range acks {
			if !a.start.Before(killed) {
				got = a.end.Sub(killed)
				return nil
			}
		}
		return fmt.Errorf("no write acknowledged since the kill")
	})
	stop()
	wg.Wait()
	if err != nil {
		return 0, fmt.Errorf("failover: %w", err)
	}
	// Bring the killed replica back (its data dir remembers the cluster).
	if err := leader.start(p.bin, nil); err != nil {
		return 0, err
	}
	return got, nil
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
