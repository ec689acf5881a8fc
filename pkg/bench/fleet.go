package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
)

// fleetWait is the simulated agents' blocking-query wait, pkg/agent's default.
const fleetWait = 5 * time.Minute

// heartbeatEvery is the simulated agents' heartbeat period (jittered ±20%).
const heartbeatEvery = 5 * time.Second

// fleetAgent is one simulated agent of figure 3: its own client, a
// heartbeat loop and a NodeState long-poll loop.
type fleetAgent struct {
	id string
	c  *client.Client

	mu   sync.Mutex
	lats []timedLatency
	errs int
}

type timedLatency struct {
	at  time.Time
	lat time.Duration
}

func (a *fleetAgent) heartbeats(ctx context.Context) {
	for {
		d := time.Duration(float64(heartbeatEvery) * (0.8 + 0.4*rand.Float64()))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		err := a.c.Heartbeat(ctx, a.id)
		a.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				a.errs++
			}
		} else {
			a.lats = append(a.lats, timedLatency{at: start, lat: time.Since(start)})
		}
		a.mu.Unlock()
	}
}

// longPoll mirrors pkg/agent's apply loop: a five-minute blocking query,
// at most one query a second when the index does not move.
func (a *fleetAgent) longPoll(ctx context.Context) {
	var idx uint64
	for ctx.Err() == nil {
		started := time.Now()
		_, next, err := a.c.NodeState(ctx, a.id, idx, fleetWait)
		if err == nil && next == idx && time.Since(started) < time.Second {
			if sleepCtx(ctx, time.Second-time.Since(started)) != nil {
				return
			}
		}
		if err != nil {
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		idx = next
	}
}

// fleetWindow is what one measurement window saw.
type fleetWindow struct {
	cpu     []float64 // cores per replica
	hbP99   float64
	entries float64 // raft entries per second on the leader
}

// fleetFigures runs each fleet size in turn, smallest first, against the
// process cluster; the larger sizes' CPU and memory are set against the
// smallest's, scaled linearly.
func fleetFigures(ctx context.Context, p *procCluster, admin *client.Client, auth *ctlproc.Authority, sizes []int, windows int, window time.Duration, progress func(string)) ([]Figure, error) {
	sizes = slices.Sorted(slices.Values(sizes))
	var out, base []Figure
	for _, n := range sizes {
		rows, err := fleetOnce(ctx, p, admin, auth, n, windows, window, progress, base, sizes[0])
		if err != nil {
			return nil, fmt.Errorf("%s nodes: %w", thousands(n), err)
		}
		if base == nil {
			base = rows
		}
		out = append(out, rows...)
	}
	return out, nil
}

// fleetOnce runs agents simulated agents against the process cluster and
// measures windows consecutive windows of length window.
func fleetOnce(ctx context.Context, p *procCluster, admin *client.Client, auth *ctlproc.Authority, agents, windows int, window time.Duration, progress func(string), base []Figure, baseAgents int) ([]Figure, error) {
	leader, _, err := p.leader(ctx, admin)
	if err != nil {
		return nil, err
	}
	addrs := []string{leader.api}
	for _, r := range p.reps {
		if r != leader {
			addrs = append(addrs, r.api)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	as := make([]*fleetAgent, agents)
	for i := range agents {
		id := fmt.Sprintf("node-%04d", i)
		c, err := auth.NewClient(addrs, apiv1.RoleNode, id)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		as[i] = &fleetAgent{id: id, c: c}
	}
	if err := seedNodeStates(ctx, admin, as); err != nil {
		return nil, err
	}
	// Start the agents over ten seconds, as a fleet that boots.
	ramp := 10 * time.Second
	for i, a := range as {
		wg.Add(2)
		go func() {
			defer wg.Done()
			t := time.NewTimer(ramp * time.Duration(i) / time.Duration(agents))
			select {
			case <-ctx.Done():
				t.Stop()
				wg.Done()
				return
			case <-t.C:
			}
			go func() {
				defer wg.Done()
				a.longPoll(ctx)
			}()
			a.heartbeats(ctx)
		}()
	}
	settle := time.NewTimer(ramp + heartbeatEvery)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-settle.C:
	}
	progress(fmt.Sprintf("fleet: %d agents running, measuring %d windows of %s", agents, windows, window))
	var ws []fleetWindow
	for range windows {
		w, err := measureFleetWindow(ctx, p, admin, leader, as, window)
		if err != nil {
			return nil, err
		}
		progress(fmt.Sprintf("fleet window: cpu %v cores, heartbeat p99 %.1f ms, %.2f raft entries/s", w.cpu, w.hbP99, w.entries))
		ws = append(ws, w)
	}
	var hwm []float64
	for _, r := range p.reps {
		u, err := readUsage(r.proc.PID())
		if err != nil {
			return nil, err
		}
		hwm = append(hwm, float64(u.hwmKB)/1024)
	}
	errs := 0
	for _, a := range as {
		a.mu.Lock()
		errs += a.errs
		a.mu.Unlock()
	}
	return fleetRows(agents, window, ws, hwm, leader.index, errs, base, baseAgents), nil
}

func measureFleetWindow(ctx context.Context, p *procCluster, admin *client.Client, leader *procReplica, as []*fleetAgent, window time.Duration) (fleetWindow, error) {
	before := make([]procUsage, len(p.reps))
	for i, r := range p.reps {
		u, err := readUsage(r.proc.PID())
		if err != nil {
			return fleetWindow{}, err
		}
		before[i] = u
	}
	h0, err := admin.HealthOf(ctx, leader.api)
	if err != nil {
		return fleetWindow{}, fmt.Errorf("fleet: %w", err)
	}
	start := time.Now()
	t := time.NewTimer(window)
	select {
	case <-ctx.Done():
		t.Stop()
		return fleetWindow{}, ctx.Err()
	case <-t.C:
	}
	wall := time.Since(start)
	h1, err := admin.HealthOf(ctx, leader.api)
	if err != nil {
		return fleetWindow{}, fmt.Errorf("fleet: %w", err)
	}
	var w fleetWindow
	for i, r := range p.reps {
		u, err := readUsage(r.proc.PID())
		if err != nil {
			return fleetWindow{}, err
		}
		w.cpu = append(w.cpu, (u.cpu-before[i].cpu).Seconds()/wall.Seconds())
	}
	w.entries = float64(h1.LastIndex-h0.LastIndex) / wall.Seconds()
	var lats []time.Duration
	end := start.Add(wall)
	for _, a := range as {
		a.mu.Lock()
		for _, l := range a.lats {
			if !l.at.Before(start) && l.at.Before(end) {
				lats = append(lats, l.lat)
			}
		}
		a.mu.Unlock()
	}
	w.hbP99 = LatenciesOf(lats).P99
	return w, nil
}

// fleetRows are one fleet size's rows; base, when not nil, is the first
// size's rows of the same run, and each CPU and memory row then names that
// figure scaled linearly to this size as its reference.
func fleetRows(agents int, window time.Duration, ws []fleetWindow, hwmMiB []float64, leader, errs int, base []Figure, baseAgents int) []Figure {
	var lcpu, hb, ent []float64
	for _, w := range ws {
		lcpu = append(lcpu, w.cpu[leader])
		hb = append(hb, w.hbP99)
		ent = append(ent, w.entries)
	}
	size := thousands(agents) + " nodes"
	note := fmt.Sprintf("%d agents (own client each, heartbeat every %s ±20%%, NodeState long-poll %s as pkg/agent, one NodeState each) on 3 kcore-controller processes; %d windows of %s",
		agents, heartbeatEvery, fleetWait, len(ws), window)
	cpu := measured("3", size+": leader CPU", "cores", lcpu).withNote(note)
	cpu = cpu.withNote(fmt.Sprintf("followers: %s cores", followerCPU(ws, leader)))
	others := slices.Clone(hwmMiB)
	others = slices.Delete(others, leader, leader+1)
	rss := measured("3", size+": leader peak RSS (VmHWM)", "MiB", []float64{hwmMiB[leader]})
	rss = rss.withTarget("<= 512 MiB", hwmMiB[leader] <= 512).withNote(fmt.Sprintf("followers %.0f and %.0f MiB", others[0], others[1]))
	if base == nil {
		cpu = cpu.withTarget("<= 0.5 core", *cpu.Value <= 0.5)
	} else {
		scale := float64(agents) / float64(baseAgents)
		ref := fmt.Sprintf("%s nodes' × %s (linear), same run", thousands(baseAgents), num(scale))
		cpu = cpu.withReference(ref, *base[0].Value*scale)
		cpu = cpu.withTarget("ratio <= 1 (no worse than linear)", cpu.Ratio != nil && *cpu.Ratio <= 1)
		rss = rss.withReference(ref, *base[1].Value*scale).withNote("VmHWM is the process's peak since it started: the smaller fleet ran first on the same processes")
	}
	hbp := measured("3", size+": heartbeat p99", "ms", hb)
	if errs > 0 {
		hbp = hbp.withNote(fmt.Sprintf("%d failed heartbeats", errs))
	}
	e := measured("3", size+": raft entries/s from heartbeats", "entries/s", ent)
	e = e.withTarget("~0 (heartbeats stay out of raft)", *e.Value < 0.5)
	return []Figure{cpu, rss, hbp, e}
}

func followerCPU(ws []fleetWindow, leader int) string {
	var out []string
	for i := range ws[0].cpu {
		if i == leader {
			continue
		}
		var xs []float64
		for _, w := range ws {
			xs = append(xs, w.cpu[i])
		}
		out = append(out, num(Median(xs)))
	}
	return fmt.Sprint(out)
}

// seedNodeStates stores one NodeState per agent through the API, so each
// agent's blocking query has something to block on, as in a real cluster.
func seedNodeStates(ctx context.Context, admin *client.Client, as []*fleetAgent) error {
	const workers = 16
	ids := make(chan string)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				ns := api.NodeState{Cluster: propagationCluster, NodeID: id, Generation: 1}
				if _, err := admin.Put(ctx, api.KindNodeState, apiv1.NodeStateName(propagationCluster, id), ns, nil); err != nil {
					errs <- fmt.Errorf("fleet: seed node state of %s: %w", id, err)
					return
				}
			}
		}()
	}
	var err error
	for _, a := range as {
		select {
		case ids <- a.id:
			continue
		case err = <-errs:
		}
		break
	}
	close(ids)
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err = <-errs:
		return err
	default:
		return nil
	}
}
