package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"kcore.dev/kcore/tests/proccluster"
)

// Environment of TestChaos.
const (
	// GateRuns is how many runs a plain go test (make test) makes.
	GateRuns = 10
	// MaxRuns caps RunsEnv.
	MaxRuns = 500
	// BrokenRounds bounds TestBrokenClientFlagged's kill, write, restart,
	// read rounds.
	BrokenRounds = 5
)

func TestMain(m *testing.M) { os.Exit(proccluster.Main(m)) }

// runSeeds returns the seeds TestChaos runs: SeedEnv alone, else RunsEnv
// (default GateRuns) seeds drawn at random.
func runSeeds(getenv func(string) string) ([]uint64, error) {
	if s := getenv(SeedEnv); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", SeedEnv, err)
		}
		return []uint64{seed}, nil
	}
	runs := GateRuns
	if s := getenv(RunsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxRuns {
			return nil, fmt.Errorf("parse %s=%q: want 1 to %d", RunsEnv, s, MaxRuns)
		}
		runs = n
	}
	seeds := make([]uint64, runs)
	for i := range seeds {
		seeds[i] = rand.Uint64()
	}
	return seeds, nil
}

// runFaults returns how many faults each run injects: FaultsEnv, else
// GateFaults.
func runFaults(getenv func(string) string) (int, error) {
	s := getenv(FaultsEnv)
	if s == "" {
		return GateFaults, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxFaults {
		return 0, fmt.Errorf("parse %s=%q: want 1 to %d", FaultsEnv, s, MaxFaults)
	}
	return n, nil
}

// runMinRun returns the least time each run's clients work: MinRunEnv,
// else none.
func runMinRun(getenv func(string) string) (time.Duration, error) {
	s := getenv(MinRunEnv)
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxMinRun {
		return 0, fmt.Errorf("parse %s=%q: want a duration from 0 to %s", MinRunEnv, s, MaxMinRun)
	}
	return d, nil
}

// TestChaos makes seeded runs against real controller processes: kills,
// restarts, pauses and partitions (of the leader too) and membership
// changes while clients read and write, then checks linearizability,
// elections and convergence.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos runs start real controller processes")
	}
	seeds, err := runSeeds(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	n, err := runFaults(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	minRun, err := runMinRun(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { Run(t, seed, n, minRun) })
	}
}

// TestRunSeeds checks the seed and run-count knobs at their bounds.
func TestRunSeeds(t *testing.T) {
	env := func(kv map[string]string) func(string) string {
		return func(k string) string { return kv[k] }
	}
	if s, err := runSeeds(env(map[string]string{SeedEnv: "42", RunsEnv: "7"})); err != nil || len(s) != 1 || s[0] != 42 {
		t.Fatalf("seed: %v %v", s, err)
	}
	if s, err := runSeeds(env(nil)); err != nil || len(s) != GateRuns {
		t.Fatalf("default: %v %v", s, err)
	}
	if s, err := runSeeds(env(map[string]string{RunsEnv: strconv.Itoa(MaxRuns)})); err != nil || len(s) != MaxRuns {
		t.Fatalf("max runs: %d %v", len(s), err)
	}
	for _, bad := range []string{"0", strconv.Itoa(MaxRuns + 1), "x"} {
		if _, err := runSeeds(env(map[string]string{RunsEnv: bad})); err == nil {
			t.Fatalf("%s=%s accepted", RunsEnv, bad)
		}
	}
}

// oneVar is an environment holding name=v alone.
func oneVar(name, v string) func(string) string {
	return func(k string) string {
		if k == name {
			return v
		}
		return ""
	}
}

// TestRunFaults checks the fault-count knob at its bounds.
func TestRunFaults(t *testing.T) {
	env := func(v string) func(string) string { return oneVar(FaultsEnv, v) }
	for v, want := range map[string]int{"": GateFaults, "1": 1, strconv.Itoa(MaxFaults): MaxFaults} {
		if n, err := runFaults(env(v)); err != nil || n != want {
			t.Fatalf("%s=%q: %d %v, want %d", FaultsEnv, v, n, err, want)
		}
	}
	for _, bad := range []string{"0", strconv.Itoa(MaxFaults + 1), "x"} {
		if _, err := runFaults(env(bad)); err == nil {
			t.Fatalf("%s=%s accepted", FaultsEnv, bad)
		}
	}
}

// TestRunMinRun checks the minimum-run knob at its bounds.
func TestRunMinRun(t *testing.T) {
	env := func(v string) func(string) string { return oneVar(MinRunEnv, v) }
	for v, want := range map[string]time.Duration{"": 0, "0s": 0, "30s": MinRun, MaxMinRun.String(): MaxMinRun} {
		if d, err := runMinRun(env(v)); err != nil || d != want {
			t.Fatalf("%s=%q: %s %v, want %s", MinRunEnv, v, d, err, want)
		}
	}
	for _, bad := range []string{"-1s", (MaxMinRun + time.Second).String(), "30", "x"} {
		if _, err := runMinRun(env(bad)); err == nil {
			t.Fatalf("%s=%s accepted", MinRunEnv, bad)
		}
	}
}

// TestPaceSpreadsTheBudget: the clients' operations, made one pace apart,
// would last the longer of the minimum run and the planned schedule.
func TestPaceSpreadsTheBudget(t *testing.T) {
	faults := []Fault{{Gap: time.Second, Hold: 3 * time.Second}, {Gap: 500 * time.Millisecond, Hold: 500 * time.Millisecond}}
	for _, tc := range []struct {
		minRun, want time.Duration
	}{
		{0, 5 * time.Second},
		{MinRun, MinRun},
		{MaxMinRun, MaxMinRun},
	} {
		if got := pace(faults, tc.minRun) * MaxOps / Clients; got != tc.want {
			t.Fatalf("minRun %s: the budget lasts %s, want %s", tc.minRun, got, tc.want)
		}
	}
	if pace(nil, 0) != 0 {
		t.Fatal("no faults and no minimum: the clients should not wait")
	}
}

// TestScheduleReproducible: a seed names one schedule, within the bounds,
// and partitions are drawn only for a cluster with a network.
func TestScheduleReproducible(t *testing.T) {
	kinds := FaultKinds(true)
	a, b := Schedule(7, Replicas, FaultsPerRun, kinds), Schedule(7, Replicas, FaultsPerRun, kinds)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, different schedules:\n%v\n%v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(Schedule(8, Replicas, FaultsPerRun, kinds)) {
		t.Fatal("seeds 7 and 8 drew the same schedule")
	}
	drawn := map[FaultKind]bool{}
	for seed := range uint64(200) {
		for _, f := range Schedule(seed, Replicas, FaultsPerRun, kinds) {
			drawn[f.Kind] = true
			if f.Hold < MinHold || f.Hold > MaxHold || f.Gap < 0 || f.Gap >= MaxGap || f.Replica < 0 || f.Replica >= Replicas {
				t.Fatalf("seed %d: %v out of bounds", seed, f)
			}
		}
		for _, f := range Schedule(seed, Replicas, FaultsPerRun, FaultKinds(false)) {
			if f.Kind == IsolateLeader || f.Kind == MuteLeader || f.Kind == DeafLeader || f.Kind == IsolateReplica || f.Kind == PartitionPair {
				t.Fatalf("seed %d: %v drawn without a network", seed, f)
			}
		}
	}
	if len(drawn) != len(kinds) {
		t.Fatalf("200 schedules drew %d of the %d kinds: %v", len(drawn), len(kinds), drawn)
	}
}

// TestBrokenClientFlagged runs a deliberately broken client, one whose
// "linearizable" reads are stale reads of a follower, through the same
// recorder and checker: a follower killed while a write is acknowledged
// and restarted serves the old value, and Check must say so.
func TestBrokenClientFlagged(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real controller processes")
	}
	t.Setenv(OutEnv, t.TempDir())
	c := proccluster.New(t, proccluster.Options{Replicas: Replicas})
	rec := NewRecorder(MaxOps)
	good, broken := newWorker(c, rec, 1, 0), newWorker(c, rec, 1, 1)
	f := c.Replica((c.Leader().Index + 1) % Replicas)
	broken.reader = replicaClient(c, f, 1)
	ctx := context.Background()
	key := keyName(0)
	stale := false
	for round := 0; round < BrokenRounds && !stale; round++ {
		c.Kill(f.Index)
		put := good.put(ctx, key, nil)
		c.Restart(f.Index)
		read := broken.read(ctx, key)
		stale = put.Outcome == OK && read.Outcome == OK && read.Got != put.Value
		t.Logf("round %d: put %s %s, broken read from %s: %q found=%t %s", round, put.Value, put.Outcome, f.ID, read.Got, read.Found, read.Err)
	}
	if !stale {
		t.Fatalf("the follower never answered stale in %d rounds; the test proves nothing", BrokenRounds)
	}
	err := Check("broken-client", rec.History())
	if !errors.Is(err, ErrNotLinearizable) {
		t.Fatalf("Check = %v, want ErrNotLinearizable", err)
	}
	t.Logf("flagged as expected: %v", err)
}
