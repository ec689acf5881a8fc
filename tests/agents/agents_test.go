package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/render"
)

// labCluster is an HA variant of the reference cluster on loopback
// addresses: three control planes behind a VIP and one worker.
func labCluster(t *testing.T, vip string) *api.KubernetesCluster {
	t.Helper()
	c := &api.KubernetesCluster{
		APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster,
		Metadata: api.ObjectMeta{Name: "lab", Generation: 1},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.244.0.0/16", ServiceCIDR: "10.96.0.0/12",
			APIServerEndpoint: vip + ":16443",
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: vip, VIPInterface: "lo"},
			ControlPlaneNodes: []api.ClusterNode{
				{NodeID: "node-21", AdvertiseAddress: "127.0.0.21", Iface: "lo"},
				{NodeID: "node-22", AdvertiseAddress: "127.0.0.22", Iface: "lo"},
				{NodeID: "node-23", AdvertiseAddress: "127.0.0.23", Iface: "lo"},
			},
			WorkerNodes: []api.ClusterNode{{NodeID: "node-24", AdvertiseAddress: "127.0.0.24", Iface: "lo"}},
		},
	}
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("lab cluster invalid: %v", errs)
	}
	return c
}

// TestAgentsApplyTheLabCluster runs a real controller with its orchestrator
// and four real agents (supervisor runtime, temp roots). Only the workload
// binaries (etcd, kube-apiserver, kubelet, keepalived, …) are stand-ins.
func TestAgentsApplyTheLabCluster(t *testing.T) {
	l := startController(t)
	c := labCluster(t, "127.0.0.120")
	for _, m := range c.Spec.Members() {
		l.put(api.KindNode, m.NodeID, api.Node{APIVersion: api.APIVersion, Kind: api.KindNode, Metadata: api.ObjectMeta{Name: m.NodeID},
			Facts: api.NodeFacts{Hostname: m.NodeID, Addresses: []string{m.AdvertiseAddress}}})
	}
	l.putCluster(c, api.PhaseBootstrapping)
	var states map[string]api.NodeState
	poll(t, func() error {
		states = l.states("lab")
		if len(states) != 4 {
			return fmt.Errorf("%d node states published, want 4", len(states))
		}
		return nil
	})
	l.buildStandIns(states)
	roots := map[string]string{}
	for _, m := range c.Spec.Members() {
		roots[m.NodeID] = t.TempDir()
		root := roots[m.NodeID]
		t.Cleanup(func() { stopUnits(t, root, l.bin) })
		l.startAgent(m.NodeID, root)
	}
	t.Cleanup(func() {
		for _, na := range l.node {
			na.stop()
		}
	})
	l.waitPhase("lab", api.PhaseReady)

	t.Run("files land at the reference's paths with their modes", func(t *testing.T) {
		for id, ns := range l.states("lab") {
			admin := false
			for _, f := range ns.Files {
				fi, err := os.Stat(filepath.Join(roots[id], f.Path))
				if err != nil {
					t.Errorf("%s: %v", id, err)
					continue
				}
				if got := uint32(fi.Mode().Perm()); got != f.Mode {
					t.Errorf("%s: %s mode %o, want %o", id, f.Path, got, f.Mode)
				}
				if strings.HasSuffix(f.Path, ".key") && fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: key %s mode %o, want 600", id, f.Path, fi.Mode().Perm())
				}
				admin = admin || f.Path == render.AdminKubeconfigPath
			}
			_, err := os.Stat(filepath.Join(roots[id], render.AdminKubeconfigPath))
			if isCP := id != "node-24"; isCP != (err == nil) || isCP != admin {
				t.Errorf("%s: admin.conf on disk=%v rendered=%v, want %v", id, err == nil, admin, isCP)
			}
		}
	})

	t.Run("a manifest change restarts only the units whose inputs changed", func(t *testing.T) {
		before := map[string]map[string]int{}
		hashes := map[string]map[string]string{}
		for id, na := range l.node {
			before[id] = na.pids(t)
			hashes[id] = unitHashes(l.states("lab")[id])
		}
		changed := labCluster(t, "127.0.0.121")
		l.putCluster(changed, api.PhaseUpdating)
		l.waitRolledOut("lab")
		restarted, kept := 0, 0
		for id, na := range l.node {
			after := na.pids(t)
			now := unitHashes(l.states("lab")[id])
			for unit, pid := range before[id] {
				same := hashes[id][unit] == now[unit]
				switch {
				case same && after[unit] != pid:
					t.Errorf("%s: %s restarted (pid %d -> %d) though its inputs did not change", id, unit, pid, after[unit])
				case !same && after[unit] == pid:
					t.Errorf("%s: %s kept pid %d though its inputs changed", id, unit, pid)
				case same:
					kept++
				default:
					restarted++
				}
			}
		}
		t.Logf("the VIP change restarted %d units and kept %d running", restarted, kept)
		if restarted == 0 || kept == 0 {
			t.Errorf("restarted %d and kept %d units: the VIP change should do some of each", restarted, kept)
		}
		if pid, ok := before["node-21"][render.UnitEtcd]; !ok || l.node["node-21"].pids(t)[render.UnitEtcd] != pid {
			t.Errorf("etcd restarted on node-21 for a VIP change")
		}
	})

	t.Run("an agent restarted while a change is applied converges", func(t *testing.T) {
		na := l.node["node-22"]
		l.putCluster(labCluster(t, "127.0.0.120"), api.PhaseUpdating)
		na.stop()
		l.startAgent("node-22", roots["node-22"])
		l.waitPhase("lab", api.PhaseReady)
	})

	t.Run("a node removed from the manifest stops its units and loses its files", func(t *testing.T) {
		worker := l.node["node-24"]
		pids := worker.pids(t)
		if len(pids) == 0 {
			t.Fatal("the worker runs no unit")
		}
		smaller := labCluster(t, "127.0.0.120")
		smaller.Spec.WorkerNodes = nil
		smaller.Spec.ScheduleOnControlPlane = true
		l.putCluster(smaller, api.PhaseUpdating)
		poll(t, func() error {
			if _, ok := l.states("lab")["node-24"]; ok {
				return fmt.Errorf("node-24 still has a node state")
			}
			return nil
		})
		t.Logf("node-24 ran %d units before it left", len(pids))
		for unit, pid := range pids {
			if alive(pid) {
				t.Errorf("node-24: %s (pid %d) still runs", unit, pid)
			}
		}
		if _, err := os.Stat(filepath.Join(roots["node-24"], "etc/kubernetes/kubelet.conf")); err == nil {
			t.Error("node-24: kubelet.conf left behind")
		}
		l.waitPhase("lab", api.PhaseReady)
	})

	t.Run("delete stops every unit and removes the cluster last", func(t *testing.T) {
		pids := map[string]map[string]int{}
		for id, na := range l.node {
			pids[id] = na.pids(t)
		}
		cur, _ := l.cluster("lab")
		l.putCluster(cur, api.PhaseDeleting)
		poll(t, func() error {
			if _, ok := l.cluster("lab"); ok {
				return fmt.Errorf("cluster still stored")
			}
			return nil
		})
		n := 0
		for id, m := range pids {
			n += len(m)
			for unit, pid := range m {
				if alive(pid) {
					t.Errorf("%s: %s (pid %d) still runs after delete", id, unit, pid)
				}
			}
		}
		t.Logf("delete stopped %d processes on %d nodes", n, len(pids))
		for id, root := range roots {
			if _, err := os.Stat(filepath.Join(root, render.AdminKubeconfigPath)); err == nil {
				t.Errorf("%s: admin.conf left behind after delete", id)
			}
		}
	})
}

// unitHashes maps each unit of ns to its input hash.
func unitHashes(ns api.NodeState) map[string]string {
	out := map[string]string{}
	for _, u := range ns.Units {
		out[u.Name] = u.InputHash
	}
	return out
}
