package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/tests/harness"
	"kcore.dev/kcore/tests/proccluster"
)

// Bounds of one run.
const (
	// Replicas is how many kcore-controller processes a run starts.
	Replicas = 3
	// MinAcked is the fewest acknowledged writes a run must record: fewer
	// means the clients were starved and the check would say little.
	MinAcked = 20
	// MinAckedWait bounds how long the clients keep working after the
	// last fault healed when they have not had MinAcked writes
	// acknowledged yet (a loaded machine slows them, not the faults).
	MinAckedWait = 30 * time.Second
	// requestTimeout bounds one request to one replica inside an
	// operation (a paused replica costs at most this before the client
	// tries another).
	requestTimeout = 2 * time.Second
	// settleTimeout bounds waiting for the replicas to converge after the
	// last fault healed.
	settleTimeout = proccluster.DefaultTimeout
	// MinRun is the least time make chaos has each run's clients work:
	// a run whose faults heal sooner goes on with the clients alone.
	MinRun = 30 * time.Second
	// MaxMinRun caps MinRunEnv.
	MaxMinRun = 10 * time.Minute
)

// Environment of TestChaos, named in every run's reproduce line.
const (
	// SeedEnv reproduces one run: its seed is printed by every run.
	SeedEnv = "CHAOS_SEED"
	// RunsEnv is how many runs TestChaos makes (make chaos sets it).
	RunsEnv = "CHAOS_RUNS"
	// FaultsEnv is how many faults each run injects (make chaos sets
	// FaultsPerRun; default GateFaults).
	FaultsEnv = "CHAOS_FAULTS"
	// MinRunEnv is the least time each run's clients work, faults
	// included, as a Go duration (make chaos sets MinRun; default none).
	MinRunEnv = "CHAOS_MIN_RUN"
)

// ErrNotConverged: after every fault healed, some replica's state differs
// from the leader-confirmed state.
var ErrNotConverged = errors.New("replicas did not converge")

// newWorker builds worker id on c, with its own connections, drawing its
// operations from seed.
func newWorker(c *proccluster.Cluster, rec *Recorder, seed uint64, id int) *worker {
	w := &worker{id: id, rec: rec, rng: rand.New(rand.NewPCG(seed, uint64(id)+1)), seen: map[string]uint64{}}
	w.cl = c.NewClient(tuned(c.ClientConfig(apiv1.RoleClusterAdmin, fmt.Sprintf("chaos-%d", id))))
	for _, r := range c.Replicas() {
		w.stale = append(w.stale, replicaClient(c, r, id))
		w.staleID = append(w.staleID, r.ID)
	}
	return w
}

// replicaClient is a client of worker id that talks to replica r alone.
func replicaClient(c *proccluster.Cluster, r *proccluster.Replica, id int) *client.Client {
	return c.NewClient(tuned(c.ClientConfig(apiv1.RoleClusterAdmin, fmt.Sprintf("chaos-%d", id), r.API)))
}

// tuned shortens a client's per-request and election waits to fit
// OpTimeout, so a fault turns into unknown outcomes, not a stuck client.
func tuned(cfg client.Config) client.Config {
	cfg.Timeout = requestTimeout
	cfg.ElectionWait = OpTimeout
	return cfg
}

// Run makes one chaos run on a new cluster: Clients workers run while the
// schedule of n faults seed draws is injected, then every fault is healed
// and the history and the cluster's invariants are checked; t fails on
// any violation, naming the seed. The clients work at least minRun,
// faults included. As root the replicas get network namespaces and the
// schedule draws partitions too.
func Run(t *testing.T, seed uint64, n int, minRun time.Duration) {
	label := fmt.Sprintf("seed-%d", seed)
	network := os.Geteuid() == 0
	t.Logf("chaos run %s, %d faults, partitions %t (reproduce: %s=%d %s=%d make chaos, as the same user)", label, n, network, SeedEnv, seed, FaultsEnv, n)
	start := time.Now()
	faults := Schedule(seed, Replicas, n, FaultKinds(network))
	c := proccluster.New(t, proccluster.Options{Replicas: Replicas, Netns: network})
	rec := NewRecorder(MaxOps)
	var workers []*worker
	for id := range Clients {
		w := newWorker(c, rec, seed, id)
		w.pace = pace(faults, minRun)
		workers = append(workers, w)
	}
	final := newWorker(c, rec, seed, Clients)
	prober := newWorker(c, rec, seed, Clients+1)

	ctx, cancel := context.WithCancel(context.Background())
	work := time.Now()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
		}()
	}
	for _, f := range faults {
		t.Logf("%s: %s", label, f)
		inject(c, f, func(i int) { prober.probe(ctx, i) }, t.Logf)
	}
	healed, fullAtHeal := time.Since(work).Round(time.Second), rec.Full()
	// The faults are healed; the clients go on until the run has lasted
	// minRun and enough writes were acknowledged for the check to mean
	// something, at most MinAckedWait more.
	time.Sleep(minRun - time.Since(work))
	_ = harness.Poll(MinAckedWait, func() error {
		if n := acked(rec.History()); n < MinAcked {
			return fmt.Errorf("%d acknowledged writes", n)
		}
		return nil
	})
	cancel()
	wg.Wait()
	worked := time.Since(work).Round(time.Second)

	if err := converge(ctx, final); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	ops := rec.History()
	if n := acked(ops); n < MinAcked {
		t.Fatalf("%s: only %d acknowledged writes, want at least %d", label, n, MinAcked)
	}
	t.Logf("%s: %d operations, %d acknowledged writes, outcomes %v, clients worked %s, faults healed at %s, recorder full then %t", label, len(ops), acked(ops), outcomes(ops), worked, healed, fullAtHeal)
	if err := Check(label, ops); err != nil {
		t.Fatal(err)
	}
	if err := checkElections(c.Replicas()); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	t.Logf("%s: checked in %s", label, time.Since(start).Round(time.Second))
}

// pace is the wait between one client's operations that spreads MaxOps
// over the longer of minRun and the schedule's planned length (its gaps
// and holds), so the clients are still at work while the last faults are
// injected instead of having spent their operations before. A run lasts
// longer than planned (recovery waits, and each operation's own time
// comes on top of the pace), so the budget outlasts the faults.
func pace(faults []Fault, minRun time.Duration) time.Duration {
	var planned time.Duration
	for _, f := range faults {
		planned += f.Gap + f.Hold
	}
	return max(minRun, planned) * Clients / MaxOps
}

// converge reads every key leader-confirmed and from every replica until
// they agree, at most settleTimeout; the reads are recorded, so the final
// leader-confirmed ones are checked against every acknowledged write.
func converge(ctx context.Context, w *worker) error {
	ctx = context.WithoutCancel(ctx)
	err := harness.Poll(settleTimeout, func() error {
		for k := range Keys {
			key := keyName(k)
			want := w.read(ctx, key)
			if want.Outcome != OK {
				return fmt.Errorf("final read of %s: %s", key, want.Err)
			}
			for i, cl := range w.stale {
				got := w.staleRead(ctx, key, cl, w.staleID[i])
				if got.Outcome != OK || got.Found != want.Found || got.Got != want.Got {
					return fmt.Errorf("%s on %s is %q (found %t, err %q), leader-confirmed %q (found %t)", key, w.staleID[i], got.Got, got.Found, got.Err, want.Got, want.Found)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotConverged, err)
	}
	return nil
}

// acked counts acknowledged writes.
func acked(ops []Op) int {
	n := 0
	for _, op := range ops {
		if op.Outcome == OK && (op.Kind == KindPut || op.Kind == KindCAS || op.Kind == KindDelete) {
			n++
		}
	}
	return n
}

// outcomes counts the history's operations by outcome, for the run's log.
func outcomes(ops []Op) map[Outcome]int {
	out := map[Outcome]int{}
	for _, op := range ops {
		out[op.Outcome]++
	}
	return out
}
