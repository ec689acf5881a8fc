package render

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

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
			"state BACKUP", "nopreempt", "virtual_router_id 40", "vrrp_version 3", "advert_int 0.25", "vrrp_priority -20", "init_fail", "192.168.40.200/24 dev enp6s0"} {
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

// TestVRRPFirewallLoads loads the nftables file twice with nft inside a
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

// TestKeepalivedReloadsOnlyNewPeers: a new unicast peer list changes only
// keepalived's ReloadHash (the agent reloads it, keeping the VIP); any
// other change to its configuration (here the health check, the VIP
// interface) changes its InputHash and restarts it.
func TestKeepalivedReloadsOnlyNewPeers(t *testing.T) {
	render := func(change func(c *api.KubernetesCluster)) *api.Unit {
		t.Helper()
		c := loadCluster(t, "lab")
		change(c)
		states, err := Render(c, fakeSecrets(c), testFacts(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return unitByName(states["node-105"], UnitKeepalived)
	}
	base := render(func(*api.KubernetesCluster) {})
	if base.ReloadHash == "" || !slices.Contains(base.Inputs, KeepalivedConfigPath) {
		t.Fatalf("keepalived: reload hash %q, inputs %v", base.ReloadHash, base.Inputs)
	}
	tests := []struct {
		name    string
		change  func(c *api.KubernetesCluster)
		restart bool
	}{
		{"a peer replaced", func(c *api.KubernetesCluster) {
			c.Spec.ControlPlaneNodes[len(c.Spec.ControlPlaneNodes)-1].AdvertiseAddress = "192.168.40.111"
		}, false},
		{"a peer added", func(c *api.KubernetesCluster) {
			c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes, api.ClusterNode{NodeID: "node-111", AdvertiseAddress: "192.168.40.111", Iface: "enp6s0"})
		}, false},
		{"health check off", func(c *api.KubernetesCluster) {
			off := false
			c.Spec.HighAvailability.HealthCheck = &off
		}, true},
		{"VIP interface", func(c *api.KubernetesCluster) { c.Spec.HighAvailability.VIPInterface = "enp7s0" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.change)
			if got.ReloadHash == base.ReloadHash {
				t.Fatal("the configuration changed but not the reload hash")
			}
			if restarted := got.InputHash != base.InputHash; restarted != tt.restart {
				t.Fatalf("input hash changed: %t, want %t", restarted, tt.restart)
			}
		})
	}
}
