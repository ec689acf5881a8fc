package render

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

func issueReal(t *testing.T, c *api.KubernetesCluster) *pki.ClusterSecrets {
	t.Helper()
	s, err := pki.IssueClusterSecrets(c, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, name := range []string{"lab", "lab-ha3", "single", "bridge", "lvm"} {
		t.Run(name, func(t *testing.T) {
			c := loadCluster(t, name)
			s := issueReal(t, c)
			first, err := Render(c, s, testFacts(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				again, err := Render(c, s, testFacts(), Options{})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(first, again) {
					t.Fatal("two renders of the same input differ")
				}
				for id := range first {
					if Hash(first[id]) != Hash(again[id]) {
						t.Fatalf("%s: hash differs", id)
					}
				}
			}
		})
	}
}

// TestNodesHoldOnlyTheirOwnKeys renders with real secrets and checks no
// node's files contain another node's private keys, in PEM or base64 form,
// and that workers hold no cluster signing key.
func TestNodesHoldOnlyTheirOwnKeys(t *testing.T) {
	for _, name := range []string{"lab", "lab-ha3", "bridge"} {
		t.Run(name, func(t *testing.T) {
			c := loadCluster(t, name)
			s := issueReal(t, c)
			states, err := Render(c, s, testFacts(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			ownKeys := func(id string) map[string]string {
				keys := map[string]string{}
				if n := s.Nodes[id]; n != nil {
					keys[id+" kubelet client"] = string(n.KubeletClient.KeyPEM)
					keys[id+" kubelet serving"] = string(n.KubeletServing.KeyPEM)
					if len(n.KubeProxy.KeyPEM) > 0 {
						keys[id+" kube-proxy"] = string(n.KubeProxy.KeyPEM)
					}
				}
				if cp := s.ControlPlanes[id]; cp != nil {
					for what, kp := range map[string]pki.KeyPair{
						"etcd server": cp.EtcdServer, "etcd peer": cp.EtcdPeer, "apiserver": cp.APIServer,
						"apiserver kubelet client": cp.APIServerKubeletClient, "apiserver etcd client": cp.APIServerEtcdClient,
						"controller-manager": cp.ControllerManager, "scheduler": cp.Scheduler, "admin": cp.Admin,
					} {
						keys[id+" "+what] = string(kp.KeyPEM)
					}
				}
				return keys
			}
			neverShipped := map[string]string{"etcd ca key": string(s.EtcdCA.KeyPEM), "front-proxy ca key": string(s.FrontProxyCA.KeyPEM)}
			clusterKeys := map[string]string{
				"ca key": string(s.CA.KeyPEM), "sa key": string(s.ServiceAccount.KeyPEM),
				"front-proxy client key": string(s.FrontProxyClient.KeyPEM),
			}
			for id, ns := range states {
				forbidden := map[string]string{}
				for other := range states {
					if other != id {
						for k, v := range ownKeys(other) {
							forbidden[k] = v
						}
					}
				}
				for k, v := range neverShipped {
					forbidden[k] = v
				}
				if s.ControlPlanes[id] == nil {
					for k, v := range clusterKeys {
						forbidden[k] = v
					}
				}
				for _, f := range ns.Files {
					for what, key := range forbidden {
						if strings.Contains(f.Content, key) || strings.Contains(f.Content, base64.StdEncoding.EncodeToString([]byte(key))) {
							t.Errorf("%s: %s holds %s", id, f.Path, what)
						}
					}
				}
				for what, key := range ownKeys(id) {
					if !containsKey(ns, key) {
						t.Errorf("%s lacks its own %s", id, what)
					}
				}
				if hasAdmin := fileByPath(ns, AdminKubeconfigPath) != nil; hasAdmin != (s.ControlPlanes[id] != nil) {
					t.Errorf("%s: admin.conf present = %t", id, hasAdmin)
				}
			}
		})
	}
}

func containsKey(ns *api.NodeState, key string) bool {
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	for _, f := range ns.Files {
		if strings.Contains(f.Content, key) || strings.Contains(f.Content, b64) {
			return true
		}
	}
	return false
}

func TestSecretFilesAreKeysAndKubeconfigs(t *testing.T) {
	_, states := renderCase(t, "lab", Options{})
	for id, ns := range states {
		for _, f := range ns.Files {
			isKey := strings.HasSuffix(f.Path, ".key") || strings.HasSuffix(f.Path, ".conf") && strings.HasPrefix(f.Path, "/etc/kubernetes/")
			if f.Secret != isKey || (f.Mode == 0o600) != isKey {
				t.Errorf("%s: %s secret=%t mode=%o", id, f.Path, f.Secret, f.Mode)
			}
		}
	}
}

// hashes maps "node/unit" and "node/task" to input hashes.
func hashes(states map[string]*api.NodeState) map[string]string {
	out := map[string]string{}
	for id, ns := range states {
		for _, u := range ns.Units {
			out[id+"/"+u.Name] = u.InputHash
		}
		for _, tk := range ns.Tasks {
			out[id+"/"+tk.Name] = tk.InputHash
		}
	}
	return out
}

func changedHashes(before, after map[string]*api.NodeState) []string {
	a, b := hashes(before), hashes(after)
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestVIPChangeRestartsOnlyWhatReadsIt moves the VIP with real secrets kept in
// step by Ensure: keepalived, kube-apiserver (new SANs), kubelet and the
// admin-kubeconfig users change; etcd, controller-manager, scheduler and the
// firewall do not.
func TestVIPChangeRestartsOnlyWhatReadsIt(t *testing.T) {
	c := loadCluster(t, "lab")
	s := issueReal(t, c)
	before, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.HighAvailability.VIPAddress = "192.168.40.201"
	c.Spec.APIServerEndpoint = "192.168.40.201:6443"
	reissued, err := s.Ensure(c, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"controlPlanes/node-105/apiServer", "controlPlanes/node-107/apiServer"}; !slices.Equal(reissued, want) {
		t.Fatalf("Ensure reissued %v, want %v", reissued, want)
	}
	after, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"node-103/kcore-kubelet",
		"node-105/kcore-keepalived", "node-105/kcore-kube-apiserver", "node-105/kcore-kubelet",
		"node-105/kcore-kubernetes-addons", "node-105/kcore-kubernetes-cilium",
		"node-105/kcore-kubernetes-cilium-l2", "node-105/kcore-kubernetes-provisioner",
		"node-107/kcore-keepalived", "node-107/kcore-kube-apiserver", "node-107/kcore-kubelet",
	}
	if got := changedHashes(before, after); !slices.Equal(got, want) {
		t.Fatalf("changed input hashes:\n got %v\nwant %v", got, want)
	}
}

func TestKubernetesVersionRestartsKubernetesUnitsOnly(t *testing.T) {
	c := loadCluster(t, "single")
	s := fakeSecrets(c)
	before, err := Render(c, s, nil, Options{KubernetesVersion: "1.37.0"})
	if err != nil {
		t.Fatal(err)
	}
	after, err := Render(c, s, nil, Options{KubernetesVersion: "1.37.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node-105/kcore-kube-apiserver", "node-105/kcore-kube-controller-manager", "node-105/kcore-kube-scheduler", "node-105/kcore-kubelet"}
	if got := changedHashes(before, after); !slices.Equal(got, want) {
		t.Fatalf("changed: %v, want %v", got, want)
	}
}

func TestPriority(t *testing.T) {
	tests := []struct {
		addr string
		want int
	}{
		{"192.168.40.105", 105},
		{"192.168.40.1", 1},
		{"192.168.40.254", 254},
		{"10.0.1.0", 100},
		{"10.0.1.255", 100},
		{"not-an-ip", 100},
	}
	for _, tt := range tests {
		if got := Priority(tt.addr); got != tt.want {
			t.Errorf("Priority(%s) = %d, want %d", tt.addr, got, tt.want)
		}
	}
}

func TestKeepalivedPeersAndPriority(t *testing.T) {
	c, states := renderCase(t, "lab-ha3", Options{})
	peerBlock := regexp.MustCompile(`(?s)unicast_peer \{\n(.*?)\n    \}`)
	for _, cp := range c.Spec.ControlPlaneNodes {
		f := fileByPath(states[cp.NodeID], KeepalivedConfigPath)
		if f == nil {
			t.Fatalf("%s: no keepalived.conf", cp.NodeID)
		}
		m := peerBlock.FindStringSubmatch(f.Content)
		if m == nil {
			t.Fatalf("%s: no unicast_peer block", cp.NodeID)
		}
		got := strings.Fields(m[1])
		var want []string
		for _, o := range c.Spec.ControlPlaneNodes {
			if o.NodeID != cp.NodeID {
				want = append(want, o.AdvertiseAddress)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: peers %v, want %v", cp.NodeID, got, want)
		}
		for _, line := range []string{"priority " + strings.Split(cp.AdvertiseAddress, ".")[3], "unicast_src_ip " + cp.AdvertiseAddress,
			"state BACKUP", "nopreempt", "virtual_router_id 40", "advert_int 1", "192.168.40.200/24 dev enp6s0"} {
			if !strings.Contains(f.Content, line) {
				t.Errorf("%s: keepalived.conf lacks %q", cp.NodeID, line)
			}
		}
	}
	if fileByPath(states["node-103"], KeepalivedConfigPath) != nil || unitByName(states["node-103"], UnitKeepalived) != nil {
		t.Error("worker runs keepalived")
	}
}

func TestKeepalivedHealthCheckCanBeTurnedOff(t *testing.T) {
	c := loadCluster(t, "lab")
	off := false
	c.Spec.HighAvailability.HealthCheck = &off
	states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	conf := fileByPath(states["node-105"], KeepalivedConfigPath).Content
	if strings.Contains(conf, "vrrp_script") || strings.Contains(conf, "track_script") {
		t.Fatalf("health check rendered while off:\n%s", conf)
	}
}

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

func TestNodePodCIDR(t *testing.T) {
	tests := []struct {
		cidr  string
		index int
		want  string
		err   bool
	}{
		{"10.244.0.0/16", 0, "10.244.0.0/24", false},
		{"10.244.0.0/16", 2, "10.244.2.0/24", false},
		{"10.244.0.0/16", 255, "10.244.255.0/24", false},
		{"10.244.0.0/16", 256, "", true},
		{"10.0.0.0/8", 300, "10.1.44.0/24", false},
		{"10.244.0.0/25", 0, "", true},
		{"fd00::/64", 0, "", true},
	}
	for _, tt := range tests {
		got, err := NodePodCIDR(tt.cidr, tt.index)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("NodePodCIDR(%s, %d) = %q, %v", tt.cidr, tt.index, got, err)
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

func TestRenderErrors(t *testing.T) {
	c := loadCluster(t, "lab")
	if _, err := Render(c, fakeSecrets(c), nil, Options{}); !errors.Is(err, ErrNoStorageBackend) {
		t.Errorf("without facts: %v, want ErrNoStorageBackend", err)
	}
	s := fakeSecrets(c)
	delete(s.Nodes, "node-103")
	if _, err := Render(c, s, testFacts(), Options{}); !errors.Is(err, ErrMissingSecret) {
		t.Errorf("without node secrets: %v, want ErrMissingSecret", err)
	}
	if _, err := Render(c, fakeSecrets(c), testFacts(), Options{Profile: "fast"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown profile: %v, want ErrInvalid", err)
	}
}

func TestVolumes(t *testing.T) {
	_, lvm := renderCase(t, "lvm", Options{})
	for id, ns := range lvm {
		if fileByPath(ns, ProvisionerPath) != nil || taskByName(ns, TaskProvisioner) != nil {
			t.Errorf("%s: provisioner in mode lvm", id)
		}
		want := []api.VolumeOp{{Name: "k8s-store-" + id + "-kcore-kdata", Class: "lvm", Pool: "vg_kcore",
			Device: "/dev/vg_kcore/k8s-store-" + id + "-kcore-kdata", SizeBytes: 53687091200, Role: "pool"}}
		if !reflect.DeepEqual(ns.Volumes, want) {
			t.Errorf("%s volumes = %+v", id, ns.Volumes)
		}
	}
	_, ha3 := renderCase(t, "lab-ha3", Options{})
	want := []api.VolumeOp{{Name: "k8s-lab-node-109-kcore-kdata", Class: "zfs", Pool: "tank",
		Device: "/dev/zvol/tank/k8s-lab-node-109-kcore-kdata", SizeBytes: 53687091200, FSType: "xfs", Role: "filesystem",
		MountPath: "/mnt/kcore/lab/kcore-kdata"}}
	if !reflect.DeepEqual(ha3["node-109"].Volumes, want) {
		t.Errorf("zfs volume = %+v", ha3["node-109"].Volumes)
	}
	prov := fileByPath(ha3["node-105"], ProvisionerPath)
	if prov == nil || !strings.Contains(prov.Content, "rancher/local-path-provisioner:v0.0.30") {
		t.Fatal("no provisioner manifest on the bootstrap control plane")
	}
	if fileByPath(ha3["node-107"], ProvisionerPath) != nil {
		t.Error("provisioner manifest on a non-bootstrap control plane")
	}
}

// TestVRRPFirewallLoads checks the nftables file with `nft -c` inside a
// throwaway network namespace (root only).
func TestVRRPFirewallLoads(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root to check nftables rules in a network namespace")
	}
	nft, err := exec.LookPath("nft")
	if err != nil {
		t.Skip("SKIP: nft is not installed")
	}
	_, states := renderCase(t, "lab", Options{})
	f := fileByPath(states["node-105"], VRRPFirewallPath)
	p := filepath.Join(t.TempDir(), "vrrp.nft")
	if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
		t.Fatal(err)
	}
	// Load it twice for real in a private namespace: the second load must replace, not fail.
	ns := fmt.Sprintf("kcrender%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	for range 2 {
		if out, err := exec.Command("ip", "netns", "exec", ns, nft, "-f", p).CombinedOutput(); err != nil {
			t.Fatalf("nft -f: %v\n%s", err, out)
		}
	}
	out, err := exec.Command("ip", "netns", "exec", ns, nft, "list", "table", "inet", "kcore_vrrp").CombinedOutput()
	if err != nil {
		t.Fatalf("nft list: %v\n%s", err, out)
	}
	if got := strings.Count(string(out), "notrack"); got != 2 {
		t.Fatalf("after two loads the table has %d notrack rules, want 2:\n%s", got, out)
	}
}

// TestEtcdMembershipChangeRestartsNoMember adds a control plane to a running
// cluster: the newcomer joins (state existing) and no existing member's etcd
// input hash changes, since etcd reads --initial-* only on first start.
func TestEtcdMembershipChangeRestartsNoMember(t *testing.T) {
	c := loadCluster(t, "lab")
	s := fakeSecrets(c)
	before, err := Render(c, s, testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-109", AdvertiseAddress: "192.168.40.109", Iface: "enp6s0"})
	after, err := Render(c, fakeSecrets(c), testFacts(), Options{EtcdClusterExists: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"node-105", "node-107"} {
		if unitByName(before[id], UnitEtcd).InputHash != unitByName(after[id], UnitEtcd).InputHash {
			t.Errorf("%s: etcd input hash changed on a membership change", id)
		}
	}
	argv := strings.Join(unitByName(after["node-109"], UnitEtcd).Argv, " ")
	for _, want := range []string{
		"--initial-cluster-state=existing",
		"--initial-cluster=node-105=https://192.168.40.105:2380,node-107=https://192.168.40.107:2380,node-109=https://192.168.40.109:2380",
	} {
		if !strings.Contains(argv, want) {
			t.Errorf("joining etcd argv lacks %s: %s", want, argv)
		}
	}
}
