package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// agentProc is one kcore-node-agent running in process.
type agentProc struct {
	root   string
	args   []string
	cancel context.CancelFunc
	done   chan error
}

func startAgent(t *testing.T, a *agentProc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan error, 1)
	var out, errb bytes.Buffer
	cmd := NewAgent(Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	cmd.SetArgs(a.args)
	go func() { a.done <- cmd.ExecuteContext(ctx) }()
}

func stopAgent(t *testing.T, a *agentProc) {
	t.Helper()
	a.cancel()
	if err := <-a.done; err != nil {
		t.Errorf("agent %s: %v", a.root, err)
	}
}

// killSupervised ends every process the supervisor of root left running
// (they outlive the agent by design).
func killSupervised(root string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(env, []byte("KCORE_SUPERVISOR_ROOT="+root+"\x00")) {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// unitPIDs reads the supervisor's state file.
func unitPIDs(t *testing.T, root string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "var/lib/kcore/supervisor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Units map[string]struct {
			PID int `json:"pid"`
		} `json:"units"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for n, u := range st.Units {
		out[n] = u.PID
	}
	return out
}

func e2eNodeState(node, root string, gen int64, kubeletConf, kubeletHash string, withAPI bool) api.NodeState {
	ns := api.NodeState{
		Cluster: "lab", NodeID: node, Generation: gen,
		Files: []api.File{
			{Path: "/etc/kubernetes/pki/kubelet.key", Mode: 0o600, Content: "KEY-" + node, Secret: true},
			{Path: "/etc/kubernetes/kubelet.conf", Mode: 0o644, Content: kubeletConf},
			{Path: "/var/log/kcore/runs/.keep", Mode: 0o644},
		},
		Units: []api.Unit{
			{Name: "kcore-etcd", Argv: []string{"sleep", "3600"}, InputHash: "e1"},
			{Name: "kcore-kubelet", Argv: []string{"sleep", "3602"}, InputHash: kubeletHash},
		},
		Tasks: []api.Task{{Name: "kcore-nftables", Argv: []string{"mktemp", "-p", filepath.Join(root, "var/log/kcore/runs")}, InputHash: "n1"}},
	}
	if withAPI {
		ns.Units = append(ns.Units, api.Unit{Name: "kcore-kube-apiserver", Argv: []string{"sleep", "3601"}, After: []string{"kcore-etcd"}, InputHash: "a1"})
	}
	return ns
}

// TestAgentsAgainstARealController runs a real controller and three
// kcore-node-agent commands with temporary roots and the supervisor runtime:
// they join with one-time tokens, apply their NodeStates, report, restart
// only changed units, stop removed ones, and survive a restart.
func TestAgentsAgainstARealController(t *testing.T) {
	if _, err := os.Stat("/bin/sleep"); err != nil {
		t.Skip("SKIP: no sleep binary")
	}
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443", "--out", pkiDir)
	ctl := startController(t, e, filepath.Join(pkiDir, "controller-0"))
	x, err := e.load().Current()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := clientFor(x)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := t.Context()

	nodes := []string{"node-105", "node-107", "node-103"}
	agents := map[string]*agentProc{}
	for _, n := range nodes {
		caFile := filepath.Join(e.dir, n+"-ca.crt")
		tok := strings.SplitN(e.must("node", "token", "create", "--node", n, "--ttl", "10m", "--ca-out", caFile), "\n", 2)[0]
		root := t.TempDir()
		t.Cleanup(func() { killSupervised(root) })
		if _, err := admin.Put(ctx, api.KindNodeState, "lab/"+n, e2eNodeState(n, root, 1, "kubelet", "k1", true), nil); err != nil {
			t.Fatal(err)
		}
		a := &agentProc{root: root, args: []string{"--controller", ctl.HTTPAddr(), "--ca-file", caFile, "--join-token", tok,
			"--node-id", n, "--root", root, "--runtime", "supervisor", "--log-level", "error"}}
		agents[n] = a
		startAgent(t, a)
	}
	defer func() {
		for _, a := range agents {
			stopAgent(t, a)
		}
	}()

	waitReport := func(node string, gen int64) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			obj, err := admin.Get(ctx, "NodeReport", "lab/"+node)
			if err == nil {
				var r api.NodeReport
				if json.Unmarshal(obj.Data, &r) == nil && r.ObservedGeneration == gen && !settledPending(r) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no settled report of generation %d from %s (last: %s, %v)", gen, node, obj.Data, err)
			}
			<-tick.C
		}
	}
	for _, n := range nodes {
		waitReport(n, 1)
		root := agents[n].root
		key := filepath.Join(root, "etc/kubernetes/pki/kubelet.key")
		st, err := os.Stat(key)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s key: %v %v", n, st, err)
		}
		if data, _ := os.ReadFile(key); string(data) != "KEY-"+n {
			t.Fatalf("%s key content %q", n, data)
		}
	}
	for _, n := range nodes {
		deadline := time.Now().Add(60 * time.Second)
		for {
			_, err := admin.Get(ctx, "Node", n)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s reported no facts: %v", n, err)
			}
			<-time.After(50 * time.Millisecond)
		}
	}

	// node-107: the kubelet's config and hash change; only the kubelet restarts.
	before := unitPIDs(t, agents["node-107"].root)
	if _, err := admin.Put(ctx, api.KindNodeState, "lab/node-107", e2eNodeState("node-107", agents["node-107"].root, 2, "kubelet v2", "k2", true), nil); err != nil {
		t.Fatal(err)
	}
	waitReport("node-107", 2)
	after := unitPIDs(t, agents["node-107"].root)
	if after["kcore-etcd"] != before["kcore-etcd"] || after["kcore-kube-apiserver"] != before["kcore-kube-apiserver"] {
		t.Fatalf("unchanged units restarted: %v -> %v", before, after)
	}
	if after["kcore-kubelet"] == before["kcore-kubelet"] {
		t.Fatal("the kubelet kept running with its old config")
	}

	// node-103: the API server is no longer rendered; its process stops.
	apiPID := unitPIDs(t, agents["node-103"].root)["kcore-kube-apiserver"]
	if _, err := admin.Put(ctx, api.KindNodeState, "lab/node-103", e2eNodeState("node-103", agents["node-103"].root, 2, "kubelet", "k1", false), nil); err != nil {
		t.Fatal(err)
	}
	waitReport("node-103", 2)
	if err := syscall.Kill(apiPID, 0); err == nil && !isZombie(apiPID) {
		t.Fatalf("removed unit's process %d still runs", apiPID)
	}

	// node-105: the agent restarts; a new generation with the same content
	// restarts nothing and re-runs no task, and no second join is needed.
	a := agents["node-105"]
	pids := unitPIDs(t, a.root)
	stopAgent(t, a)
	startAgent(t, a)
	if _, err := admin.Put(ctx, api.KindNodeState, "lab/node-105", e2eNodeState("node-105", a.root, 2, "kubelet", "k1", true), nil); err != nil {
		t.Fatal(err)
	}
	waitReport("node-105", 2)
	if got := unitPIDs(t, a.root); got["kcore-etcd"] != pids["kcore-etcd"] || got["kcore-kubelet"] != pids["kcore-kubelet"] {
		t.Fatalf("agent restart restarted units: %v -> %v", pids, got)
	}
	runs, _ := filepath.Glob(filepath.Join(a.root, "var/log/kcore/runs/tmp.*"))
	if len(runs) != 1 {
		t.Fatalf("task ran %d times, want once", len(runs))
	}
}

func settledPending(r api.NodeReport) bool {
	for _, it := range r.Items {
		if it.State != api.ItemOK {
			return true
		}
	}
	return false
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && data[i+2] == 'Z'
}
