package agent

import (
	"context"
	"errors"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

const testCRI = "unix:///run/containerd/containerd.sock"

// criState is a node with containerd (serving a CRI) and kubelet.
func criState(gen int64, containerdHash string) api.NodeState {
	return api.NodeState{Cluster: "lab", NodeID: "n", Generation: gen, Units: []api.Unit{
		{Name: "kcore-containerd", Argv: []string{"containerd"}, InputHash: containerdHash, KillMode: api.KillModeProcess, CRIEndpoint: testCRI},
		{Name: "kcore-kubelet", Argv: []string{"kubelet"}, InputHash: "k", After: []string{"kcore-containerd"}},
	}}
}

// drainRecorder returns a DrainPods that records "drain ENDPOINT" in rt's
// calls, so the order against the runtime's stops shows, and fails with
// fail when set.
func drainRecorder(rt *fakeRuntime, fail error) func(context.Context, string) error {
	return func(_ context.Context, endpoint string) error {
		rt.calls = append(rt.calls, "drain "+endpoint)
		return fail
	}
}

// stopsAndDrains keeps the drain and stop calls of rt, in order.
func stopsAndDrains(rt *fakeRuntime) []string {
	var out []string
	for _, c := range rt.calls {
		if c[:5] == "drain" || c[:4] == "stop" {
			out = append(out, c)
		}
	}
	return out
}

// TestRemovingCRIUnitDrainsItsPodsFirst: when the cluster is deleted (an
// empty NodeState), kubelet stops, then containerd's pods are drained
// through its CRI, then containerd stops; a restart of containerd (a new
// input hash) drains nothing.
func TestRemovingCRIUnitDrainsItsPodsFirst(t *testing.T) {
	rt := &fakeRuntime{}
	a := newApplier(t.TempDir(), rt, execrun.NewRecorder())
	a.DrainPods = drainRecorder(rt, nil)
	applyUntilSettled(t, a, criState(1, "c1"))
	applyUntilSettled(t, a, criState(2, "c2"))
	if got := stopsAndDrains(rt); len(got) != 0 {
		t.Fatalf("restarting containerd drained or stopped: %v", got)
	}

	applyUntilSettled(t, a, api.NodeState{Cluster: "lab", NodeID: "n", Generation: 3})
	want := []string{"stop kcore-kubelet", "drain " + testCRI, "stop kcore-containerd"}
	if got := stopsAndDrains(rt); !slices.Equal(got, want) {
		t.Fatalf("delete: %v, want %v", got, want)
	}
	if cs := a.state.Clusters["lab"]; len(cs.CRI) != 0 {
		t.Fatalf("removed CRI unit still recorded: %v", cs.CRI)
	}
}

// TestTeardownDrainsCRIUnit: a cluster that disappears from the input
// altogether drains its CRI unit's pods before stopping it too.
func TestTeardownDrainsCRIUnit(t *testing.T) {
	rt := &fakeRuntime{}
	a := newApplier(t.TempDir(), rt, execrun.NewRecorder())
	a.DrainPods = drainRecorder(rt, nil)
	applyUntilSettled(t, a, criState(1, "c1"))
	if _, err := a.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"stop kcore-kubelet", "drain " + testCRI, "stop kcore-containerd"}
	if got := stopsAndDrains(rt); !slices.Equal(got, want) {
		t.Fatalf("teardown: %v, want %v", got, want)
	}
}

// TestFailedDrainIsReportedButRemovesTheUnit: a drain that fails is
// reported on the unit's item once, and the unit is stopped anyway.
func TestFailedDrainIsReportedButRemovesTheUnit(t *testing.T) {
	rt := &fakeRuntime{}
	a := newApplier(t.TempDir(), rt, execrun.NewRecorder())
	errDrain := errors.New("runtime not answering")
	a.DrainPods = drainRecorder(rt, errDrain)
	applyUntilSettled(t, a, criState(1, "c1"))
	reps, err := a.Apply(context.Background(), []api.NodeState{{Cluster: "lab", NodeID: "n", Generation: 2}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := itemMessages(reps, KindUnit)
	if got := msgs["kcore-containerd"]; got != "drain pods of kcore-containerd: runtime not answering" {
		t.Fatalf("containerd item %q, want the drain failure", got)
	}
	if _, running := rt.units["kcore-containerd"]; running {
		t.Fatal("a failed drain kept containerd")
	}
	applyUntilSettled(t, a, api.NodeState{Cluster: "lab", NodeID: "n", Generation: 2})
}
