package plan

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// keepalivedState is a control plane's keepalived, configuration and unit,
// with the given input and reload hashes.
func keepalivedState(conf, input, reload string) *api.NodeState {
	const path = "/etc/keepalived/kcore-lab.conf"
	return &api.NodeState{
		Cluster: "lab", NodeID: "node-105",
		Files: []api.File{{Path: path, Mode: 0o644, Content: conf}},
		Units: []api.Unit{{Name: "kcore-keepalived", Argv: []string{"keepalived"}, InputHash: input, ReloadHash: reload, Inputs: []string{path}}},
	}
}

// A unit whose reload hash alone changed is reloaded, says which file, and
// is no restart a roller sequences; a new input hash restarts it even when
// the reload hash changed too; a unit without a reload hash never reloads.
func TestNodeDiffReload(t *testing.T) {
	tests := []struct {
		name     string
		old, cur *api.NodeState
		want     string
		restarts []string
	}{
		{"peers changed", keepalivedState("peers a", "i1", "r1"), keepalivedState("peers b", "i1", "r2"), ChangeReload, nil},
		{"vip changed", keepalivedState("vip a", "i1", "r1"), keepalivedState("vip b", "i2", "r2"), ChangeRestart, []string{"kcore-keepalived"}},
		{"reload hash dropped", keepalivedState("a", "i1", "r1"), keepalivedState("a", "i1", ""), ChangeUpdate, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NodeDiff(tt.old, tt.cur)
			var unit *ItemChange
			for i := range got.Items {
				if got.Items[i].Kind == KindUnit {
					unit = &got.Items[i]
				}
			}
			if tt.want == ChangeUpdate {
				// Not a reload (nothing for the agent to signal): the plan
				// shows no unit change at all, as the agent does nothing.
				if unit != nil {
					t.Fatalf("unit change %+v, want none", *unit)
				}
				return
			}
			if unit == nil || unit.Change != tt.want {
				t.Fatalf("unit change %+v, want %s", unit, tt.want)
			}
			if !slices.Equal(unit.Because, []string{"/etc/keepalived/kcore-lab.conf"}) {
				t.Errorf("because %v, want the configuration", unit.Because)
			}
			if r := got.Restarts(); !slices.Equal(r, tt.restarts) {
				t.Errorf("Restarts() = %v, want %v", r, tt.restarts)
			}
		})
	}
}

// The step of a component whose unit only reloads is a reload that
// disrupts nothing: keepalived keeps the VIP.
func TestGroupActionReload(t *testing.T) {
	g := group{component: ComponentKeepalived, items: []ItemChange{
		{Kind: KindFile, Name: "/etc/keepalived/kcore-lab.conf", Change: ChangeChange},
		{Kind: KindUnit, Name: "kcore-keepalived", Change: ChangeReload},
	}}
	if action, disruption := groupAction(g, modeUpdate); action != StepReload || disruption != DisruptionNone {
		t.Fatalf("groupAction = %s %s, want %s %s", action, disruption, StepReload, DisruptionNone)
	}
}
