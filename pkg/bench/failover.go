package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
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
func failoverFigures(ctx context.Context, p *procCluster, admin *client.Client, auth *ctlproc.Authority, runs int, progress func(string)) ([]Figure, error) {
	cfg, err := auth.ClientConfig(p.addrs(), apiv1.RoleClusterAdmin, "bench-failover")
	if err != nil {
		return nil, err
	}
	cfg.ElectionWait = -1
	cfg.Timeout = 2 * time.Second
	cfg.DialTimeout = 500 * time.Millisecond
	var secs, detect []float64
	for r := range runs {
		d, det, err := failoverOnce(ctx, p, admin, cfg)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("failover run %d: %s (first follower heartbeat timeout after %s)", r+1, d.Round(time.Millisecond), det.Round(time.Millisecond)))
		secs = append(secs, d.Seconds())
		if det > 0 {
			detect = append(detect, det.Seconds())
		}
	}
	f := measured("5a", "failover: leader SIGKILLed, time to next acknowledged write", "s", secs)
	f = f.withTarget("< 2.5 s", *f.Value < 2.5)
	f = f.withNote(fmt.Sprintf("%d writers (own client each, all three addresses, retry every 10 ms, no client back-off) on 3 kcore-controller processes with raft's default timeouts", failoverWriters))
	out := []Figure{f}
	if len(detect) > 0 {
		out = append(out, measured("5a", "  split: kill to first follower's heartbeat timeout", "s", detect).withNote(
			"diagnostic: from the surviving replicas' logs (raft's \"heartbeat timeout reached, starting election\"); the rest of 5a is the election and the first commit"))
	}
	return out, nil
}

// heartbeatTimeoutMsg is what hashicorp/raft logs (at warn) when a
// follower stops hearing from its leader and starts an election.
const heartbeatTimeoutMsg = "heartbeat timeout reached, starting election"

// firstHeartbeatTimeout returns how long after killed the first surviving
// replica logged a heartbeat timeout; 0 when none did.
func firstHeartbeatTimeout(p *procCluster, dead *procReplica, killed time.Time) time.Duration {
	var first time.Duration
	for _, r := range p.reps {
		if r == dead {
			continue
		}
		b, err := os.ReadFile(r.spec.LogPath)
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if !strings.Contains(line, heartbeatTimeoutMsg) {
				continue
			}
			t, ok := logTime(line)
			if !ok || t.Before(killed) {
				continue
			}
			if d := t.Sub(killed); first == 0 || d < first {
				first = d
			}
		}
	}
	return first
}

// logTime parses the time= field of a slog text line.
func logTime(line string) (time.Time, bool) {
	_, rest, ok := strings.Cut(line, "time=")
	if !ok {
		return time.Time{}, false
	}
	v, _, _ := strings.Cut(rest, " ")
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

func failoverOnce(ctx context.Context, p *procCluster, admin *client.Client, cfg client.Config) (time.Duration, time.Duration, error) {
	if err := poll(ctx, readyTimeout, func() error { return p.healthy(ctx, admin, 3) }); err != nil {
		return 0, 0, fmt.Errorf("failover: cluster not healthy: %w", err)
	}
	leader, _, err := p.leader(ctx, admin)
	if err != nil {
		return 0, 0, err
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
			return 0, 0, fmt.Errorf("failover: %w", err)
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
		return 0, 0, err
	}
	killed := time.Now()
	if err := leader.kill(); err != nil {
		return 0, 0, err
	}
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
		return 0, 0, fmt.Errorf("failover: %w", err)
	}
	// Bring the killed replica back (its data dir remembers the cluster).
	detect := firstHeartbeatTimeout(p, leader, killed)
	if err := leader.start(ctx); err != nil {
		return 0, 0, err
	}
	return got, detect, nil
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
