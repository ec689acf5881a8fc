package render

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestPinsMoveOnlyThePinnedComponents renders the lab cluster on one release,
// then pins one node's control-plane components (a rollout's control-plane
// step) and another node's kubelet (a kubelet step): exactly those units get
// the new Version and a new input hash, every other unit is unchanged.
func TestPinsMoveOnlyThePinnedComponents(t *testing.T) {
	c := loadCluster(t, "lab")
	s := fakeSecrets(c)
	c.Status.KubernetesVersion = "v1.36.3"
	before, err := Render(c, s, testFacts(), Options{KubernetesVersion: "v1.99.0"})
	if err != nil {
		t.Fatal(err)
	}
	for id, ns := range before {
		for _, u := range []string{UnitAPIServer, UnitKubelet} {
			if got := unitByName(ns, u); got != nil && got.Version != "v1.36.3" {
				t.Errorf("%s %s: version %q, want the cluster's recorded v1.36.3 over the controller default", id, u, got.Version)
			}
		}
		if got := unitByName(ns, UnitEtcd); got != nil && got.Version != "" {
			t.Errorf("%s etcd is pinned to %q: etcd's release is not a Kubernetes release", id, got.Version)
		}
	}
	cp, kl := c.Spec.ControlPlaneNodes[0].NodeID, c.Spec.ControlPlaneNodes[1].NodeID
	c.Status.Pins = map[string]api.NodePin{cp: {ControlPlane: "v1.37.2"}, kl: {Kubelet: "v1.37.2"}}
	after, err := Render(c, s, testFacts(), Options{KubernetesVersion: "v1.99.0"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		cp + "/" + UnitAPIServer: true, cp + "/" + UnitControllerManager: true, cp + "/" + UnitScheduler: true,
		kl + "/" + UnitKubelet: true,
	}
	for id, ns := range after {
		for _, u := range ns.Units {
			old := unitByName(before[id], u.Name)
			changed := old == nil || old.InputHash != u.InputHash
			key := id + "/" + u.Name
			if changed != want[key] {
				t.Errorf("%s changed=%v, want %v", key, changed, want[key])
			}
			if want[key] && u.Version != "v1.37.2" {
				t.Errorf("%s version %q, want v1.37.2", key, u.Version)
			}
		}
	}
}
