package render

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// referenceCiliumSettings are the reference's cilium install --set values
// for the lab cluster, with its mtu under the chart's key MTU (Cilium's
// chart has no mtu value: the reference's would be ignored).
func referenceCiliumSettings() []string {
	return []string{
		"ipam.mode=kubernetes",
		"kubeProxyReplacement=true",
		"bpf.masquerade=true",
		"routingMode=native",
		"autoDirectNodeRoutes=true",
		"ipv4NativeRoutingCIDR=10.244.0.0/16",
		"MTU=1500",
		"l2announcements.enabled=true",
		"k8sServiceHost=192.168.40.200",
		"k8sServicePort=6443",
		"devices[0]=enp6s0",
	}
}

// ciliumSettingsOf are the chart values the renderer derives from c.
func ciliumSettingsOf(t *testing.T, c *api.KubernetesCluster) []string {
	t.Helper()
	argv, err := CiliumArgs(c)
	if err != nil {
		t.Fatal(err)
	}
	return setValues(argv)[1:]
}

// setValues are the values of argv's --set flags, in order.
func setValues(argv []string) []string {
	var out []string
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "--set" {
			out = append(out, argv[i+1])
		}
	}
	return out
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

func TestCiliumSettingsEqualReference(t *testing.T) {
	_, states := renderCase(t, "lab", Options{})
	u := unitByName(states["node-105"], UnitCilium)
	if u == nil {
		t.Fatal("no cilium unit on the bootstrap control plane")
	}
	want := append([]string{"helm", "upgrade", "--install", "cilium", CiliumChartDir, "--namespace", "kube-system",
		"--kubeconfig=" + AdminKubeconfigPath, "--kube-apiserver=https://127.0.0.1:6443",
		"--wait", "--timeout=" + CiliumInstallTimeout,
		"--reset-values", "--set", "rollOutCiliumPods=true"}, interleave("--set", referenceCiliumSettings())...)
	if !slices.Equal(u.Argv, want) {
		t.Fatalf("cilium argv:\n got %q\nwant %q", u.Argv, want)
	}
	for _, k := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"} {
		if !strings.HasPrefix(u.Env[k], DefaultRunDir+"/") {
			t.Errorf("cilium unit %s = %q, want a directory under %s", k, u.Env[k], DefaultRunDir)
		}
	}
	if !u.Oneshot {
		t.Fatal("the cilium unit is not a oneshot")
	}
	for _, id := range []string{"node-107", "node-103"} {
		if unitByName(states[id], UnitCilium) != nil {
			t.Errorf("%s installs cilium; only the bootstrap control plane does", id)
		}
	}
	t.Run("reference text", func(t *testing.T) {
		ref := referenceSpec(t)
		m := regexp.MustCompile(`(?s)\ncilium install --namespace kube-system\s(.*?)\n\n`).FindStringSubmatch(ref)
		if m == nil {
			t.Fatal("no cilium install block in the reference")
		}
		var refSet []string
		for _, v := range setValues(strings.Fields(m[1])) {
			refSet = append(refSet, strings.Replace(v, "mtu=", "MTU=", 1))
		}
		if got := setValues(u.Argv)[1:]; !slices.Equal(got, refSet) {
			t.Fatalf("cilium settings:\n got %q\nwant %q (the reference's, mtu as MTU)", got, refSet)
		}
	})
}

// interleave puts flag before each value.
func interleave(flag string, values []string) []string {
	var out []string
	for _, v := range values {
		out = append(out, flag, v)
	}
	return out
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
		{"mtu", func(s *api.ClusterSpec) { s.Cilium.MTU = 9000 }, []string{"MTU=9000"}, []string{"MTU=1500"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadCluster(t, "lab")
			tt.edit(&c.Spec)
			args := ciliumSettingsOf(t, c)
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

// TestCiliumRerunsOnlyOnASettingChange: a new cluster and one that was ready
// run the same command (helm upgrade --install installs or upgrades), so the
// cluster becoming ready does not re-run the unit; a changed setting does,
// with the new value; renewed admin credentials do not.
func TestCiliumRerunsOnlyOnASettingChange(t *testing.T) {
	render := func(c *api.KubernetesCluster, secrets *pki.ClusterSecrets) *api.Unit {
		t.Helper()
		if secrets == nil {
			secrets = fakeSecrets(c)
		}
		states, err := Render(c, secrets, testFacts(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := unitByName(states["node-105"], UnitCilium)
		if u == nil {
			t.Fatal("no cilium unit on the bootstrap control plane")
		}
		return u
	}
	created := render(loadCluster(t, "lab"), nil)
	ready := render(bootstrapped(loadCluster(t, "lab")), nil)
	if !slices.Equal(ready.Argv, created.Argv) || ready.InputHash != created.InputHash {
		t.Fatalf("the cluster becoming ready changes the cilium unit:\n %q\n %q", created.Argv, ready.Argv)
	}
	mtu := bootstrapped(loadCluster(t, "lab"))
	mtu.Spec.Cilium.MTU = 9000
	changed := render(mtu, nil)
	if changed.InputHash == ready.InputHash || !slices.Contains(changed.Argv, "MTU=9000") {
		t.Errorf("an MTU change on a ready cluster: argv %q, hash changed %t; want MTU=9000, re-run", changed.Argv, changed.InputHash != ready.InputHash)
	}
	c := bootstrapped(loadCluster(t, "lab"))
	renewed := fakeSecrets(c)
	renewed.ControlPlanes["node-105"].Admin = fakePair("node-105 admin renewed")
	if got := render(c, renewed); got.InputHash != ready.InputHash {
		t.Error("new admin credentials change the cilium unit's input hash: it would run again with no change")
	}
}
