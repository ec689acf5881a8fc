package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
)

// unitItem is the report item of unit name.
func unitItem(r api.NodeReport, name string) api.ItemStatus {
	for _, it := range r.Items {
		if it.Kind == KindUnit && it.Name == name {
			return it
		}
	}
	return api.ItemStatus{}
}

// A supervised unit that crashes between applies is reported failed (same
// generation) and ok again once it has run for the settle time and its
// health URL answers; unchanged states are not re-sent.
func TestAgentReportsUnitCrashBetweenApplies(t *testing.T) {
	root := t.TempDir()
	crashFile := filepath.Join(t.TempDir(), "crash")
	ctl := newFakeController()
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	logOnFailure(t, sup.LogPath("kcore-svc"))
	var healthy atomic.Bool
	healthy.Store(true)
	const settle = 300 * time.Millisecond
	a := &Agent{
		NodeID: "node-105",
		Root:   root,
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder(), UnitSettle: settle,
			Health: func(context.Context, string) error {
				if healthy.Load() {
					return nil
				}
				return errors.New("not ready")
			}},
		Connect:           func(context.Context, Credentials, *CertSource) (Controller, error) { return ctl, nil },
		HeartbeatInterval: time.Hour,
		WatchInterval:     20 * time.Millisecond,
		RetryInterval:     20 * time.Millisecond,
	}
	if err := StoreCredentials(root, Credentials{Cert: []byte("C"), Key: []byte("K"), CA: []byte("CA")}); err != nil {
		t.Fatal(err)
	}
	u := helperUnit("kcore-svc", "flaky", "h1")
	u.Env["KCORE_TEST_CRASHFILE"] = crashFile
	u.HealthURL = "http://127.0.0.1:1/healthz"
	ctl.set(api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 7, Units: []api.Unit{u}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	last := func() api.ItemStatus {
		r, _ := ctl.lastReport()
		return unitItem(r, u.Name)
	}
	waitFor(t, "the unit reported ok", func() bool { return last().State == api.ItemOK })
	healthy.Store(false)
	if err := os.WriteFile(crashFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crash reported", func() bool { return last().State == api.ItemFailed })
	r, _ := ctl.lastReport()
	if r.ObservedGeneration != 7 {
		t.Errorf("crash report generation = %d, want 7", r.ObservedGeneration)
	}
	if msg := last().Message; !strings.HasPrefix(msg, "exited with status 1 at ") || !strings.HasSuffix(msg, ", restarting (restart 1)") {
		t.Errorf("crash message = %q", msg)
	}
	if it := last(); it.Restarts != 1 || !it.Restarting {
		t.Errorf("crash item restarts=%d restarting=%v, want 1 and true", it.Restarts, it.Restarting)
	}

	// Restarted and running for longer than the settle time, but unhealthy: still failed.
	waitFor(t, "the unit restarted and past its settle time", func() bool {
		st, err := sup.Status(context.Background(), u.Name)
		return err == nil && st.State == runtime.StateRunning && st.Restarts == 1 && time.Since(st.Since) > 3*settle
	})
	if live := a.Applier.Live(context.Background()); len(live) != 1 || unitItem(live[0], u.Name).State != api.ItemFailed {
		t.Fatalf("an unhealthy restarted unit is live %+v", live)
	}
	if it := last(); it.State != api.ItemFailed {
		t.Fatalf("an unhealthy restarted unit is reported %s", it.State)
	}
	healthy.Store(true)
	waitFor(t, "the unit reported ok again", func() bool { return last().State == api.ItemOK })

	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	var states []string
	for i, rp := range ctl.reports {
		it := unitItem(rp, u.Name)
		if i > 0 && it == unitItem(ctl.reports[i-1], u.Name) {
			t.Errorf("report %d repeats report %d: %+v", i, i-1, it)
		}
		states = append(states, it.State)
	}
	if got := strings.Join(states, ","); !strings.HasSuffix(got, "ok,failed,ok") {
		t.Errorf("reported states %s, want them to end ok,failed,ok", got)
	}
}

// Apply creates the runtime directory units keep pid files in.
func TestApplyCreatesRunDir(t *testing.T) {
	root := t.TempDir()
	a := newApplier(root, newSupervisor(t, root), execrun.NewRecorder())
	if _, err := a.Apply(context.Background(), []api.NodeState{{Cluster: "lab", NodeID: "node-105", Generation: 1}}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(root, RunDir))
	if err != nil || !st.IsDir() {
		t.Fatalf("%s under the root: %v %v", RunDir, st, err)
	}
}

// A re-apply while a crashed unit has not settled yet does not hide the crash.
func TestLiveKeepsACrashAcrossReapply(t *testing.T) {
	root := t.TempDir()
	crashFile := filepath.Join(t.TempDir(), "crash")
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	a := &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder(), UnitSettle: time.Hour}
	u := helperUnit("kcore-svc", "flaky", "h1")
	u.Env["KCORE_TEST_CRASHFILE"] = crashFile
	ns := api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 3, Units: []api.Unit{u}}
	ctx := context.Background()
	applyUntilSettled(t, a, ns)
	liveItem := func() api.ItemStatus { return unitItem(a.Live(ctx)[0], u.Name) }
	if it := liveItem(); it.State != api.ItemOK {
		t.Fatalf("live before the crash: %+v", it)
	}
	if err := os.WriteFile(crashFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crash seen", func() bool { return liveItem().State == api.ItemFailed })
	waitFor(t, "the unit restarted", func() bool {
		st, err := sup.Status(ctx, u.Name)
		return err == nil && st.State == runtime.StateRunning && st.Restarts == 1
	})
	reps, err := a.Apply(ctx, []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	if it := unitItem(reps[0], u.Name); it.State != api.ItemOK {
		t.Fatalf("re-apply of a running unit: %+v", it)
	}
	if it := liveItem(); it.State != api.ItemFailed || !strings.Contains(it.Message, "restarting (restart 1)") {
		t.Fatalf("live after the re-apply: %+v, want the crash until the unit settles", it)
	}
}

// logOnFailure logs the unit log at path when the test failed.
func logOnFailure(t *testing.T, path string) {
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(path)
			t.Logf("%s:\n%s", path, data)
		}
	})
}
