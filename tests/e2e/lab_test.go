package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLab brings the lab up as make lab does and runs, in order, on that one
// cluster: (1) create → ready, the workload checks (workloads_test.go),
// upstream's DNS and Services conformance tests (conformance_test.go) and
// the registry mirror cut off from one node (mirror_test.go), (2)
// keepalived and (3) kube-apiserver killed on the VIP holder, a change of
// each field a second apply updates (fields_scenarios_test.go), an
// extraArgs change rolled one control plane at a time, commits to a git
// source adding and removing a worker (gitops_test.go), a second cluster on
// the same machines created and deleted (second_cluster_test.go), a
// rotation of the cluster's CAs (carotation_test.go), the Cilium oneshot's
// helm command installing and then upgrading its chart in place
// (cilium_chart_test.go), (6) delete, then (7) a cluster on the freed machines created, changed and
// destroyed with tofu through the provider (terraform_test.go). Each node's
// raw disk volume is checked mounted after (1) and kept with its data after
// the delete. A fourth namespace registers without
// joining: the scheduleOnControlPlane and GitOps scenarios make it a worker
// for a while, and the second cluster its worker.
func TestLab(t *testing.T) {
	l := startLab(t, true, "LAB_NODES=4")
	steps := []struct {
		name string
		run  func(*testing.T, *lab)
	}{
		{"create-ready", testCreateReady},
		{"disk-volumes-mounted", testDiskVolumes},
		{"workloads", testWorkloads},
		{"upstream-conformance-subset", testConformanceSubset},
		{"mirror-unreachable-from-one-node", testMirrorUnreachable},
		{"keepalived-killed-on-vip-holder", testKeepalivedKilled},
		{"apiserver-killed-on-vip-holder", testAPIServerKilled},
		{"field-changes", testFieldChanges},
		{"apiserver-extra-args-roll", testExtraArgsRoll},
		{"gitops-commit-adds-worker", testGitOpsAddsWorker},
		{"second-cluster", testSecondCluster},
		// After the GitOps scenario: the source's manifest has no
		// caGeneration, and lowering it is refused.
		{"ca-rotation", testCARotation},
		{"cilium-chart-upgrades-in-place", testCiliumChartUpgradesInPlace},
		{"cilium-datapath", testCiliumDatapath},
		{"delete", testDelete},
		{"disk-volumes-kept-after-delete", testDiskVolumesKept},
		{"terraform", testTerraform},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, l) }) {
			return
		}
	}
}

// testCreateReady: the cluster is ready, kubectl answers through the VIP,
// every node is Ready, etcd has three started members and the add-on
// manifests pass the API server's strict field validation.
func testCreateReady(t *testing.T, l *lab) {
	eventually(t, "kctl kubernetes health", time.Minute, l.healthy)
	eventually(t, "/readyz through the VIP", 30*time.Second, l.readyz)
	eventually(t, "every node Ready", 3*time.Minute, func() error {
		out, err := l.kubectl("get", "nodes", "-o", "json")
		if err != nil {
			return err
		}
		return allNodesReady(out, len(labNodes()))
	})
	eventually(t, "three started etcd members", 30*time.Second, func() error { return l.etcdMembers(3) })
	testKubeconfig(t, l)
	// RBAC, CoreDNS, the kube-dns Service and the provisioner; the lab's
	// bridge CNI has no Cilium pool.
	checkKubectlManifests(t, l.kubectl, filepath.Join(l.dir, "n1"), 4)
}

// testKubeconfig: kctl kubernetes kubeconfig hands the lab's cluster-admin a
// short-lived certificate whose group the cluster's RBAC binds to
// cluster-admin, and kubectl reaches the cluster with it through the VIP.
func testKubeconfig(t *testing.T, l *lab) {
	file := filepath.Join(l.dir, "kubeconfig-"+cluster)
	if out, err := l.kctl(30*time.Second, "kubernetes", "kubeconfig", cluster, "--ttl", "10m", "--out", file, "--force"); err != nil {
		t.Fatalf("kctl kubernetes kubeconfig: %v\n%s", err, out)
	}
	eventually(t, "kubectl with the issued kubeconfig", 30*time.Second, func() error {
		_, err := run(15*time.Second, nil, filepath.Join(l.k8sBin, "kubectl"), "--kubeconfig", file, "--request-timeout=5s", "get", "nodes")
		return err
	})
}

// etcdctl runs etcdctl against the lab cluster's etcd on n1 with the API
// server's client certificate.
func (l *lab) etcdctl(args ...string) (string, error) {
	return run(30*time.Second, nil, append([]string{filepath.Join(l.k8sBin, "etcdctl"),
		"--endpoints", "https://" + labNodes()[0].addr + ":2379",
		"--cacert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/etcd/ca.crt"),
		"--cert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.crt"),
		"--key", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.key")}, args...)...)
}

// etcdMembers is nil when etcd (asked through n1) has exactly want members,
// all started voters.
func (l *lab) etcdMembers(want int) error {
	out, err := l.etcdctl("member", "list", "-w", "json")
	if err != nil {
		return err
	}
	var ml struct {
		Members []struct {
			Name       string   `json:"name"`
			ClientURLs []string `json:"clientURLs"`
			IsLearner  bool     `json:"isLearner"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &ml); err != nil {
		return fmt.Errorf("decode etcdctl member list: %w\n%s", err, out)
	}
	var started []string
	for _, m := range ml.Members {
		// etcdctl shows a member as started once it has a name and client URLs.
		if m.Name != "" && len(m.ClientURLs) > 0 && !m.IsLearner {
			started = append(started, m.Name)
		}
	}
	if len(ml.Members) != want || len(started) != want {
		return fmt.Errorf("etcd members: %d, started voters %v; want %d started", len(ml.Members), started, want)
	}
	return nil
}

// allNodesReady checks kubectl get nodes -o json for want Ready nodes.
func allNodesReady(out string, want int) error {
	var nl struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Status struct {
				Conditions []struct {
					Type   string `json:"type"`
					Status string `json:"status"`
				} `json:"conditions"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &nl); err != nil {
		return fmt.Errorf("decode nodes: %w", err)
	}
	var ready []string
	for _, n := range nl.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				ready = append(ready, n.Metadata.Name)
			}
		}
	}
	if len(ready) != want {
		return fmt.Errorf("%d of %d nodes Ready (%v)", len(ready), want, ready)
	}
	return nil
}

// testKeepalivedKilled: SIGKILL keepalived on the VIP holder; the VIP moves
// to another node, the API answers through it and the cluster stays ready.
func testKeepalivedKilled(t *testing.T, l *lab) {
	holder := vipHolder(t, 30*time.Second, "")
	pid := l.killUnit(holder, "kcore-keepalived")
	killed := time.Now()
	t.Logf("killed keepalived (pid %d) on VIP holder %s", pid, holder)
	next := vipHolder(t, 30*time.Second, holder)
	t.Logf("VIP moved %s → %s in %s", holder, next, time.Since(killed).Round(100*time.Millisecond))
	eventually(t, "/readyz through the VIP", 30*time.Second, l.readyz)
	eventually(t, "the supervisor restarts keepalived on "+holder, 30*time.Second, func() error {
		p, err := l.unitPID(holder, "kcore-keepalived")
		if err == nil && p == pid {
			return fmt.Errorf("keepalived on %s still pid %d", holder, pid)
		}
		return err
	})
	eventually(t, "cluster ready", time.Minute, l.healthy)
	if h := vipHolder(t, 10*time.Second, ""); h != next {
		t.Fatalf("VIP went back from %s to %s after keepalived restarted (nopreempt)", next, h)
	}
}

// testAPIServerKilled: SIGKILL only kube-apiserver on the VIP holder; its
// health check fails, keepalived moves the VIP, the API answers through it,
// the supervisor restarts kube-apiserver and the cluster is ready again.
func testAPIServerKilled(t *testing.T, l *lab) {
	holder := vipHolder(t, 30*time.Second, "")
	var addr string
	for _, n := range labNodes() {
		if n.name == holder {
			addr = n.addr
		}
	}
	pid := l.killUnit(holder, "kcore-kube-apiserver")
	killed := time.Now()
	t.Logf("killed kube-apiserver (pid %d) on VIP holder %s", pid, holder)
	next := vipHolder(t, 30*time.Second, holder)
	t.Logf("VIP moved %s → %s in %s", holder, next, time.Since(killed).Round(100*time.Millisecond))
	eventually(t, "/readyz through the VIP", 30*time.Second, l.readyz)
	degraded := ""
	eventually(t, "kube-apiserver restarted and ready on "+holder, 2*time.Minute, func() error {
		if out := l.healthOutput(); strings.Contains(firstLine(out), "degraded") && degraded == "" {
			degraded = out
		}
		p, err := l.unitPID(holder, "kcore-kube-apiserver")
		if err != nil {
			return err
		}
		if p == pid {
			return fmt.Errorf("kube-apiserver on %s still pid %d", holder, pid)
		}
		out, err := l.kubectl("--server", "https://"+addr+":"+apiPort, "get", "--raw", "/readyz")
		if err != nil {
			return err
		}
		if strings.TrimSpace(out) != "ok" {
			return fmt.Errorf("/readyz on %s answered %q", addr, out)
		}
		return nil
	})
	eventually(t, "cluster ready again", 2*time.Minute, l.healthy)
	t.Run("reported-degraded", func(t *testing.T) {
		if degraded == "" {
			t.Fatalf("kctl kubernetes health never showed the cluster degraded while kube-apiserver on %s was down", holder)
		}
		if !strings.Contains(degraded, "kcore-kube-apiserver") || !strings.Contains(degraded, nodeID(holder)) {
			t.Fatalf("degraded health does not name kcore-kube-apiserver on %s:\n%s", nodeID(holder), degraded)
		}
		t.Logf("seen:\n%s", degraded)
	})
}

// testDelete: delete tears Kubernetes down on every node: no unit left, no
// Kubernetes process in any namespace, the rendered files gone, the VIP
// released.
func testDelete(t *testing.T, l *lab) {
	if out, err := l.kctl(6*time.Minute, "kubernetes", "delete", cluster, "--yes", "--wait", "--timeout", "5m"); err != nil {
		t.Fatalf("kctl kubernetes delete: %v\n%s", err, out)
	}
	if held, err := vipHolders(); err != nil || len(held) > 0 {
		t.Errorf("VIP %s still held after delete by %v (%v)", vip, held, err)
	}
	for _, n := range labNodes() {
		s, err := l.units(n.name)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Units) != 0 {
			t.Errorf("%s: units left after delete: %v", n.id, s.Units)
		}
		pids, err := run(5*time.Second, nil, "ip", "netns", "pids", labNetns(n.name))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range lingering(strings.Fields(pids)) {
			t.Errorf("%s: process %s still runs after delete", n.id, p)
		}
		left, _ := filepath.Glob(filepath.Join(l.dir, n.name, "etc", "kubernetes", "*"))
		var files []string
		for _, f := range left {
			if st, err := os.Stat(f); err == nil && !st.IsDir() {
				files = append(files, f)
			}
		}
		if len(files) > 0 {
			t.Errorf("%s: files left after delete: %v", n.id, files)
		}
	}
	if out, err := l.kctl(30*time.Second, "kubernetes", "list"); err != nil || strings.Contains(out, cluster+" ") {
		t.Errorf("kctl kubernetes list after delete: %v\n%s", err, out)
	}
}

// lingerAfterDelete is how long a process found after a delete may take to
// be gone before it counts as left behind: the agent's facts probes
// ("kubelet --version", "etcd --version") run for milliseconds in the
// node's namespace at any time, and a unit left running never ends.
const lingerAfterDelete = 3 * time.Second

// lingering returns, as "PID (comm)", the processes of pids other than the
// node agent that still run, the same process, lingerAfterDelete later.
func lingering(pids []string) []string {
	// procStart reads a process's comm and start time (stat field 22),
	// which tell a process from a later one with the same pid.
	procStart := func(p string) (comm, start string, ok bool) {
		stat, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			return "", "", false
		}
		open, end := strings.IndexByte(string(stat), '('), strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[end+1:]))
		if open < 0 || len(fields) < 20 {
			return "", "", false
		}
		return string(stat[open+1 : end]), fields[19], true
	}
	seen := map[string]string{}
	for _, p := range pids {
		if comm, start, ok := procStart(p); ok && comm != "kcore-node-agen" {
			seen[p] = start
		}
	}
	if len(seen) == 0 {
		return nil
	}
	time.Sleep(lingerAfterDelete)
	var out []string
	for _, p := range pids {
		if comm, start, ok := procStart(p); ok && seen[p] == start && start != "" {
			out = append(out, p+" ("+comm+")")
		}
	}
	return out
}

// TestLingeringKeepsOnlyWhatOutlives runs without the lab: a process that
// ends within the settle is not reported, one that outlives it is, and so
// is a pid that does not exist not.
func TestLingeringKeepsOnlyWhatOutlives(t *testing.T) {
	long := exec.Command("sleep", "30")
	short := exec.Command("sleep", "0.2")
	for _, c := range []*exec.Cmd{long, short} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	defer long.Process.Kill()
	go short.Wait()
	got := lingering([]string{strconv.Itoa(long.Process.Pid), strconv.Itoa(short.Process.Pid), "999999999"})
	want := []string{strconv.Itoa(long.Process.Pid) + " (sleep)"}
	if !slices.Equal(got, want) {
		t.Fatalf("lingering = %v, want %v", got, want)
	}
}
