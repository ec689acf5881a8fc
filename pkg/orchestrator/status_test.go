package orchestrator

import (
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

func TestNextPhase(t *testing.T) {
	healthy := []api.Condition{
		{Type: CondAPIReady, Status: StatusTrue}, {Type: CondEtcdHealthy, Status: StatusTrue},
		{Type: CondNodesHeartbeating, Status: StatusTrue},
	}
	apiDown := []api.Condition{
		{Type: CondAPIReady, Status: StatusFalse}, {Type: CondEtcdHealthy, Status: StatusTrue},
	}
	silent := []api.Condition{
		{Type: CondAPIReady, Status: StatusTrue}, {Type: CondEtcdHealthy, Status: StatusTrue},
		{Type: CondNodesHeartbeating, Status: StatusFalse},
	}
	bootstrapped := append([]api.Condition{{Type: CondBootstrapped, Status: StatusTrue}}, healthy...)
	applied := observation{allApplied: true}
	applying := observation{pending: []string{"node-105"}}
	failed := observation{failed: []string{"node-105: unit kcore-etcd failed: exit status 1"}}
	tests := []struct {
		name        string
		cur         string
		conds       []api.Condition
		ob          observation
		published   bool
		etcdPending bool
		addonsDown  bool
		want        string
	}{
		{"bootstrap waits for the nodes", api.PhaseBootstrapping, healthy, applying, false, false, false, api.PhaseBootstrapping},
		{"bootstrap waits for health", api.PhaseBootstrapping, apiDown, applied, false, false, false, api.PhaseBootstrapping},
		{"bootstrap done", api.PhaseBootstrapping, healthy, applied, false, false, false, api.PhaseReady},
		{"no phase yet is a bootstrap", "", healthy, applying, false, false, false, api.PhaseBootstrapping},
		{"no phase after a bootstrap is an update", "", bootstrapped, applying, false, false, false, api.PhaseUpdating},
		{"a failed item degrades a bootstrap", api.PhaseBootstrapping, healthy, failed, false, false, false, api.PhaseDegraded},
		{"a failed item degrades an update", api.PhaseUpdating, healthy, failed, true, false, false, api.PhaseDegraded},
		{"update done", api.PhaseUpdating, healthy, applied, false, false, false, api.PhaseReady},
		{"scale waits for etcd", api.PhaseScaling, healthy, applied, false, true, false, api.PhaseScaling},
		{"scale done", api.PhaseScaling, healthy, applied, false, false, false, api.PhaseReady},
		{"publishing on a ready cluster updates it", api.PhaseReady, healthy, applying, true, false, false, api.PhaseUpdating},
		{"publishing on a degraded cluster updates it", api.PhaseDegraded, apiDown, applying, true, false, false, api.PhaseUpdating},
		{"ready stays ready", api.PhaseReady, healthy, applied, false, false, false, api.PhaseReady},
		{"ready while a node re-applies stays ready", api.PhaseReady, healthy, applying, false, false, false, api.PhaseReady},
		{"api down degrades", api.PhaseReady, apiDown, applied, false, false, false, api.PhaseDegraded},
		{"a silent node degrades", api.PhaseReady, silent, applied, false, false, false, api.PhaseDegraded},
		{"recovery", api.PhaseDegraded, healthy, applied, false, false, false, api.PhaseReady},
		{"no recovery while a node applies", api.PhaseDegraded, healthy, applying, false, false, false, api.PhaseDegraded},
		{"add-ons down beyond their grace degrade", api.PhaseReady, healthy, applied, false, false, true, api.PhaseDegraded},
		{"no recovery while add-ons are down", api.PhaseDegraded, healthy, applied, false, false, true, api.PhaseDegraded},
		{"a bootstrap does not wait for add-ons", api.PhaseBootstrapping, healthy, applied, false, false, true, api.PhaseReady},
		{"an update does not wait for add-ons", api.PhaseUpdating, healthy, applied, false, false, true, api.PhaseReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextPhase(tc.cur, tc.conds, tc.ob, tc.published, tc.etcdPending, tc.addonsDown); got != tc.want {
				t.Errorf("nextPhase(%q) = %q, want %q", tc.cur, got, tc.want)
			}
		})
	}
}

func TestSetConditionKeepsSinceWhileTheStatusHolds(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	cs := setCondition(nil, api.Condition{Type: CondAPIReady, Status: StatusFalse, Message: "a"}, t0)
	cs = setCondition(cs, api.Condition{Type: CondAPIReady, Status: StatusFalse, Message: "b"}, t1)
	if cs[0].Since != "2026-01-02T03:04:05Z" || cs[0].Message != "b" {
		t.Errorf("same status: %+v, want since kept and message updated", cs[0])
	}
	cs = setCondition(cs, api.Condition{Type: CondAPIReady, Status: StatusTrue}, t1)
	if cs[0].Since != "2026-01-02T03:05:05Z" {
		t.Errorf("status change: since %s, want the change's time", cs[0].Since)
	}
	cs = setCondition(cs, api.Condition{Type: CondEtcdHealthy, Status: StatusTrue}, t1)
	if len(cs) != 2 || cs[0].Type != CondAPIReady || cs[1].Type != CondEtcdHealthy {
		t.Errorf("conditions %+v, want two sorted by type", cs)
	}
}
