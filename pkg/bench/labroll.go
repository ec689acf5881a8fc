package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// rollTimeout bounds one rolling update's apply --wait.
const rollTimeout = 12 * time.Minute

// maxRollProbes bounds figure 7's probes per target and run: /readyz
// through the VIP and on every node's own API server every probeEvery
// (10 Hz), each given probeTimeout, for at most rollTimeout.
const maxRollProbes = int(rollTimeout / probeEvery)

// rollSample is one rolling control-plane update.
type rollSample struct {
	// took is the apply --wait, command to exit.
	took time.Duration
	// vipGap is the longest stretch without an answer through the VIP:
	// from the first failed probe's send to the next success's answer;
	// zero when no probe failed.
	vipGap time.Duration
	// outages are each node's longest own /readyz outage, measured the
	// same way: its API server's restart.
	outages []time.Duration
	// failed and probes count the VIP probes.
	failed, probes int
}

// prober asks /readyz of one address every probeEvery until stopped, at
// most max times.
type prober struct {
	max    int
	mu     sync.Mutex
	probes []probe
}

func (p *prober) run(ctx context.Context, c *http.Client, addr string, stop <-chan struct{}) {
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for range p.max {
		pr := probe{sent: time.Now()}
		pr.ok = readyz(ctx, c, addr) == nil
		pr.answered = time.Now()
		p.mu.Lock()
		p.probes = append(p.probes, pr)
		p.mu.Unlock()
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// longestGap is the longest stretch of failed probes, from the first
// failure's send to the next success's answer (or the last probe's answer
// when none followed), and the count of failed probes.
func longestGap(probes []probe) (time.Duration, int) {
	var longest time.Duration
	failed := 0
	var from time.Time
	for _, p := range probes {
		if !p.ok {
			failed++
			if from.IsZero() {
				from = p.sent
			}
			continue
		}
		if !from.IsZero() {
			longest = max(longest, p.answered.Sub(from))
			from = time.Time{}
		}
	}
	if !from.IsZero() && len(probes) > 0 {
		longest = max(longest, probes[len(probes)-1].answered.Sub(from))
	}
	return longest, failed
}

// rollManifest is the lab manifest src with spec.apiServer.extraArgs set
// to an event TTL of hours: a change that restarts every kube-apiserver and
// nothing else, so each value rolls the control planes once.
func rollManifest(src, dir string, hours int) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("rolling update: %w", err)
	}
	out := strings.TrimRight(string(data), "\n") + fmt.Sprintf("\n  apiServer:\n    extraArgs:\n      event-ttl: %dh\n", hours)
	f := filepath.Join(dir, fmt.Sprintf("roll-%d.yaml", hours))
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		return "", fmt.Errorf("rolling update: %w", err)
	}
	return f, nil
}

// rollOnce applies manifest f to the ready lab cluster while probing
// /readyz through the VIP and on every node, and measures the roll.
func (l *labEnv) rollOnce(ctx context.Context, c, pc *http.Client, f string) (rollSample, error) {
	var s rollSample
	if _, err := l.settled(ctx, c); err != nil {
		return s, fmt.Errorf("rolling update: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	vip := &prober{max: maxRollProbes}
	own := map[string]*prober{}
	wg.Go(func() { vip.run(ctx, pc, labVIP, stop) })
	for _, n := range labNodes() {
		p := &prober{max: maxRollProbes}
		own[n.name] = p
		wg.Go(func() { p.run(ctx, pc, n.addr, stop) })
	}
	start := time.Now()
	out, err := l.kctl(ctx, rollTimeout, "kubernetes", "apply", "-f", f, "--yes", "--wait", "--timeout", (rollTimeout - time.Minute).String())
	s.took = time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		return s, fmt.Errorf("rolling update: %w\n%s", err, tail(out, 20))
	}
	if !strings.Contains(out, "step 3 of 3") {
		return s, fmt.Errorf("rolling update: apply --wait did not roll three control planes:\n%s", tail(out, 20))
	}
	s.vipGap, s.failed = longestGap(vip.probes)
	s.probes = len(vip.probes)
	for _, n := range labNodes() {
		gap, _ := longestGap(own[n.name].probes)
		if gap == 0 {
			return s, fmt.Errorf("rolling update: %s's own /readyz never failed: its kube-apiserver did not restart", n.name)
		}
		s.outages = append(s.outages, gap)
	}
	return s, nil
}

// rollFigures are figure 7: runs rolling control-plane updates (a new
// kube-apiserver flag, one node at a time) of the ready lab cluster.
func rollFigures(ctx context.Context, l *labEnv, runs int, progress func(string)) ([]Figure, error) {
	c, pc, err := l.probeClients()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kcore-bench-roll-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var took, floor, gaps, outages []float64
	failed, probes := 0, 0
	for i := range runs {
		f, err := rollManifest(l.manifest(), dir, i+2)
		if err != nil {
			return nil, err
		}
		s, err := l.rollOnce(ctx, c, pc, f)
		if err != nil {
			return nil, fmt.Errorf("7, run %d: %w", i+1, err)
		}
		sum := 0.0
		for _, o := range s.outages {
			sum += o.Seconds()
			outages = append(outages, o.Seconds())
		}
		progress(fmt.Sprintf("7 rolling update run %d: apply --wait %s; own /readyz outages %v (sum %.2fs); longest gap through the VIP %s, %d of %d probes failed",
			i+1, s.took.Round(10*time.Millisecond), roundAll(s.outages), sum, s.vipGap.Round(time.Millisecond), s.failed, s.probes))
		took = append(took, s.took.Seconds())
		floor = append(floor, sum)
		gaps = append(gaps, s.vipGap.Seconds())
		failed += s.failed
		probes += s.probes
	}
	bound, err := l.handoverBound()
	if err != nil {
		return nil, err
	}
	d := measured("7", "rolling control-plane update: apply --wait of a new kube-apiserver flag (3 nodes, one at a time)", "s", took)
	d = d.withReference("floor: the 3 kube-apiserver restarts back to back (own /readyz outages summed)", Median(floor))
	d = d.withNote("spec.apiServer.extraArgs event-ttl changed on the ready lab cluster; each node's outage is its longest run of failed /readyz probes on its own address (10 Hz), first failure sent → next success answered")
	// The probes run one after another, so a probe that times out hides
	// any gap shorter than its timeout: the reference is the longer of the
	// hand-over and what the probe can show.
	g := measured("7", "  longest /readyz gap through the VIP during the roll", "s", gaps)
	g = g.withReference(fmt.Sprintf("the longer of VRRP's hand-over (the longest Skew_Time a backup waits after the holder's priority-0 advertisement, %s s) and one probe's timeout (%s), the shortest gap a probe that times out can show", num(bound), probeTimeout),
		max(bound, probeTimeout.Seconds()))
	g = g.withNote(fmt.Sprintf("a probe with a new connection every %s, %s timeout, from the command to its exit; %d of %d probes failed; 0 when none failed", probeEvery, probeTimeout, failed, probes))
	o := measured("7", "  one kube-apiserver restart: its own /readyz outage", "s", outages).withNote("diagnostic: every node of every run")
	return []Figure{d, g, o}, nil
}
