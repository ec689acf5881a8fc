package render

import (
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/render/kubeflags"
)

// TestExtraArgsRestartOnlyTheirUnit: an extraArgs change is in the argv and
// the input hash of its unit only, the same map renders the same argv, and
// extra flags come after kcore's own, sorted by name.
func TestExtraArgsRestartOnlyTheirUnit(t *testing.T) {
	c := loadCluster(t, "lab-ha3")
	base, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.APIServer.ExtraArgs = map[string]string{"event-ttl": "2h", "audit-log-maxage": "30"}
	got, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	for id, ns := range got {
		for _, u := range ns.Units {
			old := unitByName(base[id], u.Name)
			changed := old == nil || old.InputHash != u.InputHash
			if changed != (u.Name == UnitAPIServer) {
				t.Errorf("%s %s: input hash changed = %v", id, u.Name, changed)
			}
			if u.Name != UnitAPIServer {
				continue
			}
			tail := u.Argv[len(u.Argv)-2:]
			if !slices.Equal(tail, []string{"--audit-log-maxage=30", "--event-ttl=2h"}) {
				t.Errorf("%s argv ends %v, want the extra flags sorted last", id, tail)
			}
			if !slices.Equal(u.Argv[:len(u.Argv)-2], old.Argv) {
				t.Errorf("%s: kcore's own flags changed with extraArgs", id)
			}
		}
	}
	for range 20 {
		again, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
		if err != nil {
			t.Fatal(err)
		}
		if Hash(again["node-105"]) != Hash(got["node-105"]) {
			t.Fatal("the same extraArgs rendered two different states")
		}
	}
}

// TestOwnedFlagsAreTheRenderedOnes: kubeflags.Owned, which validation
// refuses in extraArgs, lists exactly the flags the renderer puts on each
// unit's command line.
func TestOwnedFlagsAreTheRenderedOnes(t *testing.T) {
	c := loadCluster(t, "lab-ha3")
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	units := map[string]string{
		kubeflags.APIServer: UnitAPIServer, kubeflags.ControllerManager: UnitControllerManager,
		kubeflags.Scheduler: UnitScheduler, kubeflags.Kubelet: UnitKubelet,
	}
	for comp, unit := range units {
		u := unitByName(states["node-105"], unit)
		var names []string
		for _, a := range u.Argv[1:] {
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			names = append(names, name)
		}
		slices.Sort(names)
		if owned := kubeflags.Owned(comp); !slices.Equal(names, owned) {
			t.Errorf("%s renders %v, kubeflags.Owned says %v", unit, names, owned)
		}
	}
}
