package rollout

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestCheckRollback(t *testing.T) {
	minor := func() (*RolloutPlan, []*api.KubernetesCluster) {
		u := update(func(s *api.UpdateSpec) { s.TestedOSPins.KubernetesVersion = "1.37.2" })
		cs := []*api.KubernetesCluster{bigCluster()}
		return Plan(Input{Update: u, Clusters: cs, Nodes: bigNodes("1.36.4", "3.6.5")}), cs
	}
	patch := func() (*RolloutPlan, []*api.KubernetesCluster) {
		in := labInput()
		return Plan(in), in.Clusters
	}
	done := func(n, total int) api.UpdateStatus {
		st := api.UpdateStatus{Phase: PhasePaused}
		for i := range total {
			s := StepPending
			if i < n {
				s = StepDone
			}
			st.Steps = append(st.Steps, api.UpdateStep{State: s})
		}
		return st
	}
	tests := []struct {
		name     string
		plan     func() (*RolloutPlan, []*api.KubernetesCluster)
		done     int
		blocking []string
		warnings []string
	}{
		{"minor upgrade, one etcd member moved", minor, 1, nil, []string{CodeRollbackKubernetesMinor}},
		{"minor upgrade, two of three moved", minor, 2, nil, []string{CodeRollbackKubernetesMinor}},
		{"minor upgrade, every etcd member moved", minor, 3, []string{CodeRollbackEtcdVersion}, []string{CodeRollbackKubernetesMinor}},
		{"minor upgrade, only workers would matter", minor, 0, nil, nil},
		{"same etcd minor, every control plane done", patch, 3, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, cs := tc.plan()
			b, w := CheckRollback(done(tc.done, len(p.Steps)), p, cs)
			if got := codes(b); !slices.Equal(got, tc.blocking) {
				t.Errorf("blocking = %v, want %v", got, tc.blocking)
			}
			if got := codes(w); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings = %v, want %v", got, tc.warnings)
			}
			for _, is := range b {
				if is.Fix == "" {
					t.Errorf("%s has no fix", is.Code)
				}
			}
		})
	}
}
