package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// A passed probe stands for HealthyReuse for the same process: a unit
// asked again right after is not probed again. A failed probe is never
// reused, a restarted process (new PID) is probed afresh, and so is one
// whose pass is older than HealthyReuse.
func TestPassedProbeStandsForItsProcess(t *testing.T) {
	rt := &fakeRuntime{}
	a := newApplier(t.TempDir(), rt, execrun.NewRecorder())
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	a.passed.now = func() time.Time { return now }
	probes := 0
	var healthErr error
	a.Health = func(context.Context, string) error { probes++; return healthErr }
	u := api.Unit{Name: "kcore-kube-apiserver", HealthURL: "https://127.0.0.1:6443/readyz"}
	if _, err := rt.Ensure(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	ready := func() bool { _, ok := a.readyNow(context.Background(), u); return ok }

	healthErr = errors.New("not yet")
	first, second := ready(), ready()
	if first || second || probes != 2 {
		t.Fatalf("a failing unit: ready, or %d probes for 2 asks (a failure must not be reused)", probes)
	}
	healthErr = nil
	if !ready() || probes != 3 {
		t.Fatalf("a passing unit: not ready, or %d probes, want 3", probes)
	}
	healthErr = errors.New("would fail now")
	now = now.Add(HealthyReuse - time.Millisecond)
	if !ready() || probes != 3 {
		t.Fatalf("asked again within HealthyReuse: probed again (%d probes) or not ready", probes)
	}
	now = now.Add(time.Millisecond)
	if ready() || probes != 4 {
		t.Fatalf("asked after HealthyReuse: not probed again (%d probes) or still ready", probes)
	}

	healthErr = nil
	if !ready() || probes != 5 {
		t.Fatalf("passing again: %d probes, want 5", probes)
	}
	rt.pid = 2 // the unit restarted
	healthErr = errors.New("the new process is not ready yet")
	if ready() || probes != 6 {
		t.Fatalf("a new process reused the old one's pass (%d probes)", probes)
	}
}
