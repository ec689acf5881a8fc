package cli

import (
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestWaitFollowsSpecRollout: apply --wait does not stop at a cluster that
// is ready between two steps of its spec rollout; it prints which step runs
// and what it waits for, and returns once the last step is done.
func TestWaitFollowsSpecRollout(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	done, out := a.applyAsync("kubernetes", "apply", "-f", lab, "--yes", "--wait")
	a.waitFor("lab", api.PhaseBootstrapping)
	steps := func(second string, msg string) []api.UpdateStep {
		return []api.UpdateStep{
			{Nodes: []string{"node-105"}, Scope: "control-plane", State: "done"},
			{Nodes: []string{"node-107"}, Scope: "control-plane", State: second, Message: msg},
		}
	}
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, SpecRollout: &api.SpecRollout{
		Generation: 1, Phase: "rolling", Steps: steps("running", "waiting: etcd member node-107 applied index 95000, 5000 behind the newest 100000"),
	}})
	waitOutput(t, out, "spec generation 1: step 2 of 2 (control-plane node-107) running: waiting: etcd member node-107")
	select {
	case r := <-done:
		t.Fatalf("apply --wait returned while a spec step runs: %v\n%s", r.err, r.out)
	default:
	}
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, SpecRollout: &api.SpecRollout{Generation: 1, Phase: api.SpecRolloutDone, Steps: steps("done", "")}})
	r := <-done
	if r.err != nil || !strings.Contains(r.out, `cluster "lab" is ready`) {
		t.Fatalf("apply --wait: %v\n%s", r.err, r.out)
	}
}

func TestGetAndHealthShowSpecRollout(t *testing.T) {
	kc := &api.KubernetesCluster{Metadata: api.ObjectMeta{Name: "lab", Generation: 3}, Status: api.ClusterStatus{SpecRollout: &api.SpecRollout{
		Generation: 3, Phase: "rolling", Steps: []api.UpdateStep{
			{Nodes: []string{"node-105"}, Scope: "control-plane", State: "done"},
			{Nodes: []string{"node-107"}, Scope: "control-plane", State: "running", Message: "waiting: cluster lab is updating"},
			{Nodes: []string{"node-103"}, Scope: "kubelet", State: "pending"},
		},
	}}}
	got := strings.Join(specRolloutLines(kc), "\n")
	for _, want := range []string{"Spec rollout:    generation 3 rolling", "step 2 control-plane", "node-107", "running: waiting: cluster lab is updating", "step 3 kubelet"} {
		if !strings.Contains(got, want) {
			t.Errorf("get lacks %q:\n%s", want, got)
		}
	}
	checks := specRolloutChecks(kc)
	if len(checks) != 2 || checks[0].OK || checks[0].Node != "node-107" || checks[0].Message != "waiting: cluster lab is updating" || checks[1].State != "pending" {
		t.Errorf("health rows %+v", checks)
	}
}
