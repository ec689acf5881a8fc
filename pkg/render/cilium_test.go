package render

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// referenceCiliumArgs is the reference's cilium install for the lab cluster.
func referenceCiliumArgs() []string {
	return []string{"cilium", "install", "--namespace", "kube-system",
		"--set", "ipam.mode=kubernetes",
		"--set", "kubeProxyReplacement=true",
		"--set", "bpf.masquerade=true",
		"--set", "routingMode=native",
		"--set", "autoDirectNodeRoutes=true",
		"--set", "ipv4NativeRoutingCIDR=10.244.0.0/16",
		"--set", "mtu=1500",
		"--set", "l2announcements.enabled=true",
		"--set", "k8sServiceHost=192.168.40.200",
		"--set", "k8sServicePort=6443",
		"--set", "devices[0]=enp6s0",
	}
}

// referenceSpec returns the reference text when the shared spec is beside the
// repository (it is in the workplace and in CI), or skips.
func referenceSpec(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "spec", "kubernetes-reference.txt"))
	if err != nil {
		t.Skipf("reference text not beside the repository: %v", err)
	}
	return string(raw)
}

func TestCiliumFlagsEqualReference(t *testing.T) {
	c, states := renderCase(t, "lab", Options{})
	u := unitByName(states["node-105"], UnitCilium)
	if u == nil {
		t.Fatal("no cilium unit on the bootstrap control plane")
	}
	if !slices.Equal(u.Argv, referenceCiliumArgs()) {
		t.Fatalf("cilium argv:\n got %q\nwant %q", u.Argv, referenceCiliumArgs())
	}
	if u.Env["KUBECONFIG"] != AdminKubeconfigPath || !u.Oneshot {
		t.Fatalf("cilium unit env %v oneshot %t", u.Env, u.Oneshot)
	}
	for _, id := range []string{"node-107", "node-103"} {
		if unitByName(states[id], UnitCilium) != nil {
			t.Errorf("%s runs cilium install; only the bootstrap control plane does", id)
		}
	}
	args, err := CiliumInstallArgs(c)
	if err != nil || !slices.Equal(args, u.Argv) {
		t.Fatalf("CiliumInstallArgs = %q, %v", args, err)
	}
	t.Run("reference text", func(t *testing.T) {
		ref := referenceSpec(t)
		m := regexp.MustCompile(`(?s)\ncilium install (.*?)\n\n`).FindStringSubmatch(ref)
		if m == nil {
			t.Fatal("no cilium install block in the reference")
		}
		want := append([]string{"cilium", "install"}, strings.Fields(m[1])...)
		if !slices.Equal(u.Argv, want) {
			t.Fatalf("cilium argv:\n got %q\nwant %q", u.Argv, want)
		}
	})
}

func TestCiliumModes(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*api.ClusterSpec)
		want    []string
		notWant []string
	}{
		{"tunnel geneve", func(s *api.ClusterSpec) { s.Cilium.Mode = "tunnel"; s.Cilium.Tunnel = "geneve" },
			[]string{"routingMode=tunnel", "tunnelProtocol=geneve"}, []string{"routingMode=native", "autoDirectNodeRoutes=true"}},
		{"tunnel default protocol", func(s *api.ClusterSpec) { s.Cilium.Mode = "tunnel" },
			[]string{"routingMode=tunnel", "tunnelProtocol=vxlan"}, nil},
		{"no pools", func(s *api.ClusterSpec) { s.Cilium.LoadBalancerIPPools = nil },
			[]string{"routingMode=native"}, []string{"l2announcements.enabled=true"}},
		{"two interfaces", func(s *api.ClusterSpec) { s.WorkerNodes[0].Iface = "eno1" },
			[]string{"devices[0]=eno1", "devices[1]=enp6s0"}, nil},
		{"mtu", func(s *api.ClusterSpec) { s.Cilium.MTU = 9000 }, []string{"mtu=9000"}, []string{"mtu=1500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCluster(t, "lab")
			tt.edit(&c.Spec)
			args, err := CiliumInstallArgs(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !slices.Contains(args, w) {
					t.Errorf("lacks %s: %q", w, args)
				}
			}
			for _, w := range tt.notWant {
				if slices.Contains(args, w) {
					t.Errorf("has %s: %q", w, args)
				}
			}
		})
	}
	c := loadCluster(t, "lab")
	c.Spec.Cilium.LoadBalancerIPPools = nil
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fileByPath(states["node-105"], CiliumL2Path) != nil || taskByName(states["node-105"], TaskCiliumL2) != nil {
		t.Error("L2 pool rendered without loadBalancerIpPools")
	}
}

func TestBridgeModeHasNoCilium(t *testing.T) {
	_, bridge := renderCase(t, "bridge", Options{})
	for id, ns := range bridge {
		if unitByName(ns, UnitCilium) != nil || fileByPath(ns, CiliumL2Path) != nil {
			t.Errorf("%s: cilium rendered in bridge mode", id)
		}
		if unitByName(ns, UnitKubeProxy) == nil || fileByPath(ns, BridgeCNIPath) == nil {
			t.Errorf("%s: no kube-proxy or bridge CNI in bridge mode", id)
		}
	}
	_, lab := renderCase(t, "lab", Options{})
	for id, ns := range lab {
		if unitByName(ns, UnitKubeProxy) != nil || fileByPath(ns, BridgeCNIPath) != nil {
			t.Errorf("%s: kube-proxy or bridge CNI in cilium mode", id)
		}
	}
}

// TestKubeProxyStartsAfterLocalAPIServer: on a control plane kube-proxy
// waits for the API server beside it; a worker, which has none, starts it
// at once.
func TestKubeProxyStartsAfterLocalAPIServer(t *testing.T) {
	_, bridge := renderCase(t, "bridge", Options{})
	var cps, workers int
	for id, ns := range bridge {
		kp := unitByName(ns, UnitKubeProxy)
		want := []string(nil)
		if unitByName(ns, UnitAPIServer) != nil {
			want = []string{UnitAPIServer}
			cps++
		} else {
			workers++
		}
		if !slices.Equal(kp.After, want) {
			t.Errorf("%s: kube-proxy after %v, want %v", id, kp.After, want)
		}
	}
	if cps == 0 || workers == 0 {
		t.Fatalf("the case has %d control planes and %d workers: both kinds must be checked", cps, workers)
	}
}

func TestNodePodCIDR(t *testing.T) {
	tests := []struct {
		cidr, addr, want string
		err              bool
	}{
		{"10.244.0.0/16", "192.168.40.105", "10.244.105.0/24", false},
		{"10.244.0.0/16", "10.77.0.11", "10.244.11.0/24", false},
		{"10.0.0.0/8", "192.168.1.44", "10.1.44.0/24", false},
		{"10.244.0.0/20", "192.168.40.105", "10.244.9.0/24", false},
		{"10.244.0.0/24", "192.168.40.105", "10.244.0.0/24", false},
		{"10.244.0.0/25", "192.168.40.105", "", true},
		{"fd00::/64", "192.168.40.105", "", true},
		{"10.244.0.0/16", "fd00::5", "", true},
	}
	for _, tt := range tests {
		got, err := NodePodCIDR(tt.cidr, tt.addr)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("NodePodCIDR(%s, %s) = %q, %v; want %q", tt.cidr, tt.addr, got, err, tt.want)
		}
	}
}

func TestCiliumL2EqualsReference(t *testing.T) {
	_, states := renderCase(t, "lab", Options{})
	want := `apiVersion: cilium.io/v2
kind: CiliumLoadBalancerIPPool
metadata:
  name: kcore
spec:
  blocks:
    - cidr: 192.168.40.220/29
---
apiVersion: cilium.io/v2alpha1
kind: CiliumL2AnnouncementPolicy
metadata:
  name: kcore
spec:
  interfaces:
    - enp6s0
  loadBalancerIPs: true
`
	f := fileByPath(states["node-105"], CiliumL2Path)
	if f == nil || f.Content != want {
		t.Fatalf("cilium-l2.yaml:\n%v\nwant\n%s", f, want)
	}
	t.Run("reference text", func(t *testing.T) {
		ref := referenceSpec(t)
		m := regexp.MustCompile(`(?s)\n(apiVersion: cilium.io/v2\n.*?loadBalancerIPs: true\n)`).FindStringSubmatch(ref)
		if m == nil || m[1] != f.Content {
			t.Fatalf("cilium-l2.yaml differs from the reference's:\n%q", m)
		}
	})
}

// bootstrapped is c's status once the cluster was ready.
func bootstrapped(c *api.KubernetesCluster) *api.KubernetesCluster {
	c.Status.Phase = api.PhaseReady
	c.Status.Conditions = []api.Condition{{Type: api.ConditionBootstrapped, Status: "True"}}
	return c
}

// TestCiliumUpgradesAReadyCluster: a cluster that was ready once runs
// `cilium upgrade` (install fails on an installed release) with the same
// settings, and the switch from install to upgrade alone does not re-run
// the unit; a settings change on it re-runs it as an upgrade.
func TestCiliumUpgradesAReadyCluster(t *testing.T) {
	render := func(c *api.KubernetesCluster) *api.Unit {
		t.Helper()
		states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := unitByName(states["node-105"], UnitCilium)
		if u == nil {
			t.Fatal("no cilium unit on the bootstrap control plane")
		}
		return u
	}
	created := render(loadCluster(t, "lab"))
	if !slices.Equal(created.Argv[:2], []string{"cilium", "install"}) || !strings.Contains(created.Reason, "`cilium install`") {
		t.Fatalf("a new cluster runs %q (%s), want cilium install", created.Argv, created.Reason)
	}
	ready := render(bootstrapped(loadCluster(t, "lab")))
	want := append([]string{"cilium", "upgrade", "--namespace", "kube-system", "--reset-values", "--set", "rollOutCiliumPods=true"}, referenceCiliumArgs()[4:]...)
	if !slices.Equal(ready.Argv, want) {
		t.Fatalf("a ready cluster runs\n %q\nwant %q", ready.Argv, want)
	}
	if !strings.Contains(ready.Reason, "`cilium upgrade`") {
		t.Errorf("reason %q does not say cilium upgrade", ready.Reason)
	}
	if ready.InputHash != created.InputHash {
		t.Error("the cluster becoming ready changes the cilium unit's input hash: it would run again with no change")
	}
	mtu := bootstrapped(loadCluster(t, "lab"))
	mtu.Spec.Cilium.MTU = 9000
	changed := render(mtu)
	if changed.InputHash == ready.InputHash || changed.Argv[1] != CiliumUpgrade || !slices.Contains(changed.Argv, "mtu=9000") {
		t.Errorf("an MTU change on a ready cluster: argv %q, hash changed %t; want cilium upgrade with mtu=9000, re-run", changed.Argv, changed.InputHash != ready.InputHash)
	}
}
