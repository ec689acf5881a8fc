package rollout

import (
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestActivationRebootWarnsItRunsInPlace(t *testing.T) {
	for _, tt := range []struct {
		activation string
		want       bool
	}{{api.ActivationAuto, false}, {api.ActivationReboot, true}} {
		u := update(func(s *api.UpdateSpec) { s.Activation = tt.activation })
		p := Plan(Input{Update: u, Clusters: []*api.KubernetesCluster{labCluster()}, Nodes: labNodes()})
		if got := slices.Contains(codes(p.Warnings), CodeActivationInPlace); got != tt.want {
			t.Errorf("activation %s: warning %s = %v, want %v (warnings %v)", tt.activation, CodeActivationInPlace, got, tt.want, codes(p.Warnings))
		}
		if p.Blocked() && slices.Contains(codes(p.Blocking), CodeActivationInPlace) {
			t.Errorf("activation %s blocks", tt.activation)
		}
	}
}
