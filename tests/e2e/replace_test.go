package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bounds of the replace scenario.
const (
	// replaceProbeEvery is the /readyz probe's interval through the VIP (10 Hz).
	replaceProbeEvery = 100 * time.Millisecond
	// replaceMaxGap is the longest the API may be unreachable through the VIP.
	replaceMaxGap = time.Second
	// replaceDeadAfter bounds how long the controller takes to see the
	// killed node's heartbeat stop (its heartbeat timeout and a margin).
	replaceDeadAfter = 3 * time.Minute
)

// TestReplace: on a lab with a spare fourth namespace, every process of one
// control plane that does not hold the VIP is SIGKILLed and its disk wiped
// (it is gone for good); `kctl kubernetes replace` swaps it for the spare
// namespace in one plan. Throughout, /readyz is probed through the VIP at
// 10 Hz and the cluster invariants are sampled on all four namespaces
// (invariants_test.go); at the end etcd has three started voting members,
// none of them the dead node, and Kubernetes lists exactly the three
// control planes. The
// staying control planes' agents reload keepalived with the new unicast
// peers (SIGHUP) instead of restarting it, so the VIP stays held.
func TestReplace(t *testing.T) {
	l := startLab(t, true, "LAB_NODES=4", "LAB_WORKLOAD_CHECK=0")
	eventually(t, "three started etcd members", time.Minute, func() error { return l.etcdMembers(3) })
	eventually(t, "cluster ready", 2*time.Minute, l.healthy)

	// etcdMembers asks lab-n1's member, so n1 stays; the dead node does not
	// hold the VIP, so killing it does not move the VIP.
	holder := vipHolder(t, 30*time.Second, "")
	dead := "n3"
	if holder == "n3" {
		dead = "n2"
	}
	p := l.startProbeAt(t, vip, replaceProbeEvery)
	inv := l.startInvariants(t, append(labNodes(), labNodeN(4))...)
	start := time.Now()

	killed := l.killNamespace(dead)
	t.Logf("killed %d processes of %s", killed, nodeID(dead))
	l.wipeRoot(dead)
	eventually(t, "the controller sees "+nodeID(dead)+" not ready", replaceDeadAfter, func() error { return l.nodeNotReady(nodeID(dead)) })

	out, err := l.kctl(12*time.Minute, "kubernetes", "replace", cluster, "--node", nodeID(dead), "--with", "lab-n4:10.77.0.14:eth0",
		"--yes", "--wait", "--timeout", "10m")
	if err != nil {
		t.Fatalf("replace %s: %v\n%s", nodeID(dead), err, out)
	}
	t.Logf("replace:\n%s", out)
	if !regexp.MustCompile(`keepalived +reload`).MatchString(out) {
		t.Errorf("the replace plan does not reload the staying control planes' keepalived:\n%s", out)
	}
	for _, step := range []string{"remove-member", "add-member", "promote-member"} {
		if !strings.Contains(out, step) {
			t.Errorf("the replace plan lacks %s:\n%s", step, out)
		}
	}
	eventually(t, "three started etcd members, the dead one gone", 2*time.Minute, func() error {
		if err := l.etcdMembers(3); err != nil {
			return err
		}
		names, err := l.etcdMemberNames()
		if err != nil {
			return err
		}
		if slices.Contains(names, nodeID(dead)) || !slices.Contains(names, "lab-n4") {
			return fmt.Errorf("etcd members %v: want lab-n4 and not %s", names, nodeID(dead))
		}
		return nil
	})
	stay := []string{"lab-n1", "lab-n4"}
	if dead == "n3" {
		stay = append(stay, "lab-n2")
	} else {
		stay = append(stay, "lab-n3")
	}
	eventually(t, "the node list is the three control planes", 3*time.Minute, func() error { return l.nodesReady(stay...) })
	eventually(t, "cluster ready", 2*time.Minute, l.healthy)

	// The staying control planes took their new peers by a reload: their
	// agents reloaded keepalived and never started it again.
	for _, n := range []string{"n1", map[string]string{"n2": "n3", "n3": "n2"}[dead]} {
		if starts := l.unitStarts(t, n, "kcore-keepalived", start); len(starts) > 0 {
			t.Errorf("%s's agent started keepalived again at %v: its new peers must be reloaded", nodeID(n), starts)
		}
		if !l.agentLogged(t, n, "reloaded unit", "kcore-keepalived", start) {
			t.Errorf("%s's agent never reloaded keepalived with the new peers", nodeID(n))
		}
	}

	windows, failed, total := p.stop()
	t.Logf("probe: %d of %d /readyz through the VIP failed; failure windows %v", failed, total, windows)
	for _, w := range windows {
		if w > replaceMaxGap {
			t.Errorf("/readyz through the VIP failed for %s (> %s) during the replacement", w, replaceMaxGap)
		}
	}
	inv.check(t)
}

// agentLogged reports whether node n's agent logged msg for unit since from.
func (l *lab) agentLogged(t *testing.T, n, msg, unit string, from time.Time) bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(l.dir, "log", "agent-"+n+".log"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^time=(\S+) .*msg="` + regexp.QuoteMeta(msg) + `".* unit=` + regexp.QuoteMeta(unit) + `( |$)`)
	for _, line := range strings.Split(string(raw), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil && !at.Before(from) {
			return true
		}
	}
	return false
}

// killNamespace SIGKILLs every process in node n's network namespace (its
// agent and every unit the agent started) and returns how many it killed.
func (l *lab) killNamespace(n string) int {
	l.t.Helper()
	out, err := run(10*time.Second, nil, "ip", "netns", "pids", labNetns(n))
	if err != nil {
		l.t.Fatal(err)
	}
	killed := 0
	for _, f := range strings.Fields(out) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			killed++
		}
	}
	if killed == 0 {
		l.t.Fatalf("no process to kill in kcore-lab-%s", n)
	}
	return killed
}

// nodeNotReady is nil once kctl reports node id not ready.
func (l *lab) nodeNotReady(id string) error {
	out, err := l.kctl(30*time.Second, "node", "get", id, "-o", "json")
	if err != nil {
		return err
	}
	var n struct {
		Status struct {
			Ready bool `json:"ready"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(out), &n); err != nil {
		return fmt.Errorf("decode kctl node get %s: %w", id, err)
	}
	if n.Status.Ready {
		return fmt.Errorf("%s still ready", id)
	}
	return nil
}

// etcdMemberNames lists the names in etcd's member list, as lab-n1's member
// answers it.
func (l *lab) etcdMemberNames() ([]string, error) {
	out, err := run(30*time.Second, nil, filepath.Join(l.k8sBin, "etcdctl"),
		"--endpoints", "https://"+labNodes()[0].addr+":2379",
		"--cacert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/etcd/ca.crt"),
		"--cert", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.crt"),
		"--key", filepath.Join(l.dir, "n1/etc/kubernetes/pki/apiserver-etcd-client.key"),
		"member", "list", "-w", "json")
	if err != nil {
		return nil, err
	}
	var ml struct {
		Members []struct {
			Name string `json:"name"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &ml); err != nil {
		return nil, fmt.Errorf("decode etcdctl member list: %w", err)
	}
	var names []string
	for _, m := range ml.Members {
		names = append(names, m.Name)
	}
	return names, nil
}

// wipeRoot removes node n's root directory, unmounting first whatever is
// still mounted under it (the killed shims' container filesystems, its
// volumes), deepest first.
func (l *lab) wipeRoot(n string) {
	l.t.Helper()
	root := filepath.Join(l.dir, n)
	data, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		l.t.Fatal(err)
	}
	var mounts []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], root+"/") {
			mounts = append(mounts, f[1])
		}
	}
	slices.SortFunc(mounts, func(a, b string) int { return len(b) - len(a) })
	for _, m := range mounts {
		if out, err := run(10*time.Second, nil, "umount", "-l", m); err != nil {
			l.t.Logf("umount %s: %v %s", m, err, out)
		}
	}
	if err := os.RemoveAll(root); err != nil {
		l.t.Fatalf("wipe %s's disk: %v", n, err)
	}
}
