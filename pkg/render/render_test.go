package render

import (
	"encoding/base64"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/manifests"
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

// changedReloads lists the "node/unit"s whose ReloadHash alone differs:
// the units a change reloads rather than restarts.
func changedReloads(before, after map[string]*api.NodeState) []string {
	var out []string
	for id, ns := range after {
		for _, u := range ns.Units {
			if old := before[id]; old != nil && unitByName(old, u.Name) != nil &&
				unitByName(old, u.Name).ReloadHash != u.ReloadHash && unitByName(old, u.Name).InputHash == u.InputHash {
				out = append(out, id+"/"+u.Name)
			}
		}
	}
	sort.Strings(out)
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
// step by Ensure: keepalived, kube-apiserver (new SANs), the workers' kubelets
// and the admin-kubeconfig users change; etcd, controller-manager, scheduler,
// the firewall and the control planes' kubelets (which talk to the API server
// beside them) do not. keepalived restarts (a new VIP is not a reload).
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
		"node-105/kcore-keepalived", "node-105/kcore-kube-apiserver", "node-105/kcore-kube-dns-service",
		"node-105/kcore-kubernetes-addons", "node-105/kcore-kubernetes-cilium",
		"node-105/kcore-kubernetes-cilium-l2", "node-105/kcore-kubernetes-provisioner",
		"node-107/kcore-keepalived", "node-107/kcore-kube-apiserver",
	}
	if got := changedHashes(before, after); !slices.Equal(got, want) {
		t.Fatalf("changed input hashes:\n got %v\nwant %v", got, want)
	}
	if got := changedReloads(before, after); len(got) > 0 {
		t.Fatalf("reloaded, not restarted: %v", got)
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
			Device: "/dev/vg_kcore/k8s-store-" + id + "-kcore-kdata", SizeBytes: 53687091200, Role: "pool",
			Reason: "LVM thin pool /dev/vg_kcore/k8s-store-" + id + "-kcore-kdata, 50 GiB; not mounted"}}
		if !reflect.DeepEqual(ns.Volumes, want) {
			t.Errorf("%s volumes = %+v", id, ns.Volumes)
		}
	}
	_, ha3 := renderCase(t, "lab-ha3", Options{})
	want := []api.VolumeOp{{Name: "k8s-lab-node-109-kcore-kdata", Class: "zfs", Pool: "tank",
		Device: "/dev/zvol/tank/k8s-lab-node-109-kcore-kdata", SizeBytes: 53687091200, FSType: "xfs", Role: "filesystem",
		MountPath: "/mnt/kcore/lab/kcore-kdata", Reason: "ZFS zvol /dev/zvol/tank/k8s-lab-node-109-kcore-kdata, 50 GiB, xfs at /mnt/kcore/lab/kcore-kdata"}}
	if !reflect.DeepEqual(ha3["node-109"].Volumes, want) {
		t.Errorf("zfs volume = %+v", ha3["node-109"].Volumes)
	}
	prov := fileByPath(ha3["node-105"], ProvisionerPath)
	if prov == nil || !strings.Contains(prov.Content, "image: "+manifests.LocalPathProvisionerImage) {
		t.Fatal("no provisioner manifest on the bootstrap control plane")
	}
	if fileByPath(ha3["node-107"], ProvisionerPath) != nil {
		t.Error("provisioner manifest on a non-bootstrap control plane")
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
