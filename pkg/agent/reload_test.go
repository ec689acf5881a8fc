package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

func TestReloadDue(t *testing.T) {
	tests := []struct {
		name          string
		reload, recor string
		want          bool
	}{
		{"no reload hash: never reloaded", "", "", false},
		{"no reload hash, one recorded: not reloaded", "", "r1", false},
		{"same as recorded", "r1", "r1", false},
		{"changed", "r2", "r1", true},
		// An agent that never recorded it (its state lost, or older) sends
		// SIGHUP once: the process reads the files it already runs with.
		{"none recorded", "r1", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := reloadDue(api.Unit{Name: "u", InputHash: "i", ReloadHash: tt.reload}, tt.recor); got != tt.want {
				t.Fatalf("reloadDue(%q, recorded %q) = %t, want %t", tt.reload, tt.recor, got, tt.want)
			}
		})
	}
}

// TestApplyReloadsWhenOnlyReloadHashChanged: a unit whose ReloadHash alone
// changed is reloaded, not restarted, and reported so; a new InputHash
// restarts it (no reload on top); a unit without a ReloadHash is never
// reloaded; a failed reload is reported and retried on the next apply.
func TestApplyReloadsWhenOnlyReloadHashChanged(t *testing.T) {
	root := t.TempDir()
	rt := &fakeRuntime{}
	a := newApplier(root, rt, execrun.NewRecorder())
	a.UnitSettle, a.DependencyWait = 10, 10
	state := func(gen int64, input, reload string) api.NodeState {
		return api.NodeState{Cluster: "lab", NodeID: "n", Generation: gen, Units: []api.Unit{
			{Name: "kcore-keepalived", Argv: []string{"keepalived"}, InputHash: input, ReloadHash: reload},
			{Name: "kcore-kubelet", Argv: []string{"kubelet"}, InputHash: "k"},
		}}
	}
	steps := []struct {
		name      string
		ns        api.NodeState
		failLoad  bool
		wantCalls []string
		wantState string
		wantMsg   string
	}{
		{"first start", state(1, "i1", "r1"), false, []string{"ensure kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, "started"},
		{"nothing changed", state(2, "i1", "r1"), false, []string{"ensure kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, ""},
		{"configuration changed", state(3, "i1", "r2"), false, []string{"ensure kcore-keepalived", "reload kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, "reloaded"},
		{"reloaded already", state(4, "i1", "r2"), false, []string{"ensure kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, ""},
		{"argv and configuration changed", state(5, "i2", "r3"), false, []string{"ensure kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, "started"},
		{"reload fails", state(6, "i2", "r4"), true, []string{"ensure kcore-keepalived", "reload kcore-keepalived", "ensure kcore-kubelet"}, api.ItemFailed, "cannot signal"},
		{"reload retried", state(7, "i2", "r4"), false, []string{"ensure kcore-keepalived", "reload kcore-keepalived", "ensure kcore-kubelet"}, api.ItemOK, "reloaded"},
	}
	for _, s := range steps {
		rt.calls, rt.failReload = nil, map[string]bool{"kcore-keepalived": s.failLoad}
		reps, err := a.Apply(context.Background(), []api.NodeState{s.ns})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !slices.Equal(rt.calls, s.wantCalls) {
			t.Errorf("%s: runtime calls %v, want %v", s.name, rt.calls, s.wantCalls)
		}
		if it := unitItem(reps[0], "kcore-keepalived"); it.State != s.wantState || it.Message != s.wantMsg {
			t.Errorf("%s: keepalived item %s %q, want %s %q", s.name, it.State, it.Message, s.wantState, s.wantMsg)
		}
	}
}

// TestSupervisedUnitReloadsInPlace runs a real process under the supervisor:
// a new ReloadHash reaches it as SIGHUP (same process, which counts it), and
// only a new InputHash starts a new process.
func TestSupervisedUnitReloadsInPlace(t *testing.T) {
	root := t.TempDir()
	hups := filepath.Join(t.TempDir(), "hups")
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	a := newApplier(root, sup, execrun.NewRecorder())
	state := func(gen int64, input, reload string) api.NodeState {
		u := helperUnit("kcore-keepalived", "hup", input)
		u.Env["KCORE_TEST_HUPFILE"] = hups
		u.ReloadHash = reload
		return api.NodeState{Cluster: "lab", NodeID: "n", Generation: gen, Units: []api.Unit{u}}
	}
	count := func(line string) int {
		raw, _ := os.ReadFile(hups)
		return strings.Count(string(raw), line+"\n")
	}
	applyUntilSettled(t, a, state(1, "i1", "r1"))
	pid := pidOf(t, sup, "kcore-keepalived")
	waitFor(t, "the process to handle SIGHUP", func() bool { return count(hupReady) == 1 })

	reps := applyUntilSettled(t, a, state(2, "i1", "r2"))
	if it := unitItem(reps[0], "kcore-keepalived"); it.Message != "reloaded" {
		t.Fatalf("new reload hash: item %+v, want reloaded", it)
	}
	waitFor(t, "the process to get SIGHUP", func() bool { return count(hupLine) == 1 })
	if got := pidOf(t, sup, "kcore-keepalived"); got != pid {
		t.Fatalf("reload restarted the unit: pid %d, was %d", got, pid)
	}

	applyUntilSettled(t, a, state(3, "i2", "r2"))
	waitFor(t, "a new process for the new input hash", func() bool { return pidOf(t, sup, "kcore-keepalived") != pid })
	if n := count(hupLine); n != 1 {
		t.Fatalf("a restart also sent SIGHUP: %d in all", n)
	}
}
