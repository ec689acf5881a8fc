package render

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// TestContainerdRendered checks that every member runs kcore-containerd from
// a version 3 config.toml serving kubelet's runtime endpoint, and that
// kubelet is ordered after it.
func TestContainerdRendered(t *testing.T) {
	c, states := renderCase(t, "lab", Options{})
	for _, m := range c.Spec.Members() {
		ns := states[m.NodeID]
		u := unitByName(ns, UnitContainerd)
		if u == nil {
			t.Fatalf("%s: no %s unit", m.NodeID, UnitContainerd)
		}
		if want := []string{"containerd", "--config", ContainerdConfigPath}; !slices.Equal(u.Argv, want) || u.Restart != api.RestartAlways || u.Version != "" || u.KillMode != api.KillModeProcess {
			t.Errorf("%s: containerd unit %+v", m.NodeID, u)
		}
		if u.CRIEndpoint != DefaultContainerRuntimeEndpoint {
			t.Errorf("%s: containerd unit serves CRI endpoint %q, want %q", m.NodeID, u.CRIEndpoint, DefaultContainerRuntimeEndpoint)
		}
		if !slices.Equal(u.Inputs, []string{ContainerdConfigPath}) {
			t.Errorf("%s: containerd hash covers %v, want only its config", m.NodeID, u.Inputs)
		}
		if k := unitByName(ns, UnitKubelet); !slices.Contains(k.After, UnitContainerd) {
			t.Errorf("%s: kubelet after %v, want %s", m.NodeID, k.After, UnitContainerd)
		}
		cfg := fileByPath(ns, ContainerdConfigPath).Content
		for _, want := range []string{
			"version = 3\n",
			`address = "/run/containerd/containerd.sock"`,
			`sandbox = "` + manifests.PauseImage + `"`,
			`config_path = "/etc/containerd/certs.d"`,
			`conf_dir = "/etc/cni/net.d"`,
			"SystemdCgroup = true",
		} {
			if !strings.Contains(cfg, want) {
				t.Errorf("%s: config.toml lacks %q:\n%s", m.NodeID, want, cfg)
			}
		}
	}
}

// TestContainerdFollowsOptions: the socket comes from the one runtime
// endpoint option kubelet uses, and the lab profile (cgroup v1 hosts
// without systemd) runs runc with cgroupfs.
func TestContainerdFollowsOptions(t *testing.T) {
	_, states := renderCase(t, "single", Options{Profile: ProfileLab, ContainerRuntimeEndpoint: "unix:///run/k/cri.sock"})
	for id, ns := range states {
		cfg := fileByPath(ns, ContainerdConfigPath).Content
		if !strings.Contains(cfg, `address = "/run/k/cri.sock"`) || !strings.Contains(cfg, "SystemdCgroup = false") {
			t.Errorf("%s: config.toml:\n%s", id, cfg)
		}
		if kc := fileByPath(ns, KubeletConfigPath).Content; !strings.Contains(kc, "containerRuntimeEndpoint: unix:///run/k/cri.sock") {
			t.Errorf("%s: kubelet config:\n%s", id, kc)
		}
		if u := unitByName(ns, UnitContainerd); u.CRIEndpoint != "unix:///run/k/cri.sock" {
			t.Errorf("%s: containerd unit CRI endpoint %q", id, u.CRIEndpoint)
		}
	}
	// Only the lab profile restricts pods' oom_score_adj and keeps their
	// network namespaces under the node's state directory: production hosts
	// have CAP_SYS_RESOURCE, and one containerd per machine keeps
	// /var/run/netns, where ip netns and other tools look.
	for profile, want := range map[Profile]bool{ProfileLab: true, ProfileDefault: false} {
		_, states := renderCase(t, "single", Options{Profile: profile})
		for id, ns := range states {
			for _, setting := range []string{"restrict_oom_score_adj = true", "netns_mounts_under_state_dir = true"} {
				if got := strings.Contains(fileByPath(ns, ContainerdConfigPath).Content, setting); got != want {
					t.Errorf("profile %q, %s: %s is %t, want %t", profile, id, setting, got, want)
				}
			}
		}
	}
	c := loadCluster(t, "single")
	if _, err := Render(c, fakeSecrets(c), testFacts(), Options{ContainerRuntimeEndpoint: "tcp://10.0.0.1:1"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a non-unix runtime endpoint rendered: %v", err)
	}
}

// TestContainerdMirrors checks hosts.toml and ca.crt per mirrored registry,
// and that editing the mirrors changes files but not containerd's input
// hash: containerd re-reads certs.d on each pull, so nothing restarts.
func TestContainerdMirrors(t *testing.T) {
	c, states := renderCase(t, "bridge", Options{})
	ns := states["node-103"]
	hosts := fileByPath(ns, ContainerdHostsPath("registry.k8s.io"))
	ca := fileByPath(ns, ContainerdCAPath("registry.k8s.io"))
	if hosts == nil || ca == nil || ca.Content != c.Spec.RegistryMirrors[0].CAPEM || ca.Secret {
		t.Fatalf("registry.k8s.io: hosts %v ca %v", hosts, ca)
	}
	for _, want := range []string{
		`server = "https://registry.k8s.io"`,
		`[host."https://10.77.0.1:5000"]`,
		`[host."https://mirror.example:5443"]`,
		`capabilities = ["pull", "resolve"]`,
		`ca = "/etc/containerd/certs.d/registry.k8s.io/ca.crt"`,
	} {
		if !strings.Contains(hosts.Content, want) {
			t.Errorf("hosts.toml lacks %q:\n%s", want, hosts.Content)
		}
	}
	if strings.Index(hosts.Content, "10.77.0.1:5000") > strings.Index(hosts.Content, "mirror.example") {
		t.Error("endpoints are not in manifest order")
	}
	docker := fileByPath(ns, ContainerdHostsPath("docker.io"))
	if docker == nil || !strings.Contains(docker.Content, `server = "https://registry-1.docker.io"`) || strings.Contains(docker.Content, "ca =") {
		t.Errorf("docker.io hosts.toml: %v", docker)
	}
	if fileByPath(ns, ContainerdCAPath("docker.io")) != nil {
		t.Error("a ca.crt for a mirror without caPem")
	}

	c2 := loadCluster(t, "bridge")
	c2.Spec.RegistryMirrors = c2.Spec.RegistryMirrors[:1]
	c2.Spec.RegistryMirrors[0].Endpoints = []string{"https://10.77.0.9:5000"}
	after, err := Render(c2, fakeSecrets(c2), testFacts(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns2 := after["node-103"]
	if fileByPath(ns2, ContainerdHostsPath("registry.k8s.io")).Content == hosts.Content || fileByPath(ns2, ContainerdHostsPath("docker.io")) != nil {
		t.Fatal("the mirror edit changed no file")
	}
	for _, u := range ns.Units {
		if unitByName(ns2, u.Name).InputHash != u.InputHash {
			t.Errorf("a mirror edit restarts %s", u.Name)
		}
	}
}

// TestContainerdRebased: a lab node's containerd keeps its root, state,
// socket and registry hosts under the node's root.
func TestContainerdRebased(t *testing.T) {
	_, states := renderCase(t, "bridge", Options{})
	moved := Rebase(states["node-103"], "/tmp/lab/n1")
	if got := unitByName(moved, UnitContainerd).Argv; got[2] != "/tmp/lab/n1"+ContainerdConfigPath || got[0] != "containerd" {
		t.Errorf("containerd argv %v", got)
	}
	cfg := fileByPath(moved, ContainerdConfigPath).Content
	for _, want := range []string{
		`root = "/tmp/lab/n1/var/lib/containerd"`,
		`state = "/tmp/lab/n1/run/containerd"`,
		`address = "/tmp/lab/n1/run/containerd/containerd.sock"`,
		`config_path = "/tmp/lab/n1/etc/containerd/certs.d"`,
		`conf_dir = "/tmp/lab/n1/etc/cni/net.d"`,
		`path = "/tmp/lab/n1/var/lib/containerd/opt"`,
		`bin_dirs = ["/opt/cni/bin", "/usr/lib/cni"]`,
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("rebased config.toml lacks %q:\n%s", want, cfg)
		}
	}
	if h := fileByPath(moved, ContainerdHostsPath("registry.k8s.io")).Content; !strings.Contains(h, `ca = "/tmp/lab/n1/etc/containerd/certs.d/registry.k8s.io/ca.crt"`) {
		t.Errorf("rebased hosts.toml:\n%s", h)
	}
}
