package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScale is scenario (4): on a lab with two spare namespaces, scale out by
// one control plane and one worker, refuse a scale-in that would lose etcd
// quorum, then scale back in; etcd membership and the node list are checked
// at each step. The cluster invariants are sampled throughout.
func TestScale(t *testing.T) {
	l := startLab(t, true, "LAB_NODES=5", "LAB_WORKLOAD_CHECK=0")
	inv := l.startInvariants(t, append(labNodes(), labNodeN(4), labNodeN(5))...)
	defer inv.check(t)
	eventually(t, "three started etcd members", 30*time.Second, func() error { return l.etcdMembers(3) })
	before := map[string]int{}
	for _, n := range []string{"n1", "n2", "n3"} {
		pid, err := l.unitPID(n, "kcore-kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		before[n] = pid
	}

	if out, err := l.kctl(10*time.Minute, "kubernetes", "scale", cluster,
		"--add-control-plane", "lab-n4:10.77.0.14:eth0", "--add-workers", "lab-n5:10.77.0.15:eth0",
		"--yes", "--wait", "--timeout", "8m"); err != nil {
		t.Fatalf("scale out: %v\n%s", err, out)
	}
	eventually(t, "four started etcd members", time.Minute, func() error { return l.etcdMembers(4) })
	eventually(t, "five nodes Ready", 3*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3", "lab-n4", "lab-n5") })
	eventually(t, "/readyz through the VIP", 30*time.Second, l.readyz)
	// The scale-out plan restarts only keepalived on the old control planes:
	// their API servers talk to their local etcd member and keep their certificates.
	for n, pid := range before {
		if now, err := l.unitPID(n, "kcore-kube-apiserver"); err != nil || now != pid {
			t.Errorf("kube-apiserver on %s: pid %d before the scale-out, %d (%v) after: the plan promised no restart", n, pid, now, err)
		}
	}

	out, err := l.kctl(2*time.Minute, "kubernetes", "scale", cluster, "--remove", "lab-n2,lab-n3,lab-n4", "--yes")
	if err == nil || !strings.Contains(out+err.Error(), "quorum-loss") {
		t.Fatalf("scale-in of three of four control planes: want refused with quorum-loss, got err %v\n%s", err, out)
	}
	eventually(t, "still four started etcd members", 30*time.Second, func() error { return l.etcdMembers(4) })

	if out, err := l.kctl(10*time.Minute, "kubernetes", "scale", cluster, "--remove", "lab-n4,lab-n5", "--yes", "--wait", "--timeout", "8m"); err != nil {
		t.Fatalf("scale in: %v\n%s", err, out)
	}
	eventually(t, "three started etcd members again", time.Minute, func() error { return l.etcdMembers(3) })
	for _, n := range []string{"n4", "n5"} {
		eventually(t, "no unit left on "+n, 2*time.Minute, func() error {
			s, err := l.units(n)
			if err != nil {
				return err
			}
			if len(s.Units) > 0 {
				return fmt.Errorf("%d units still on %s", len(s.Units), n)
			}
			return nil
		})
	}
	eventually(t, "cluster ready", 2*time.Minute, l.healthy)
	// The scale-in plan says "delete the Node object" of each removed node.
	eventually(t, "the node list back to three", 2*time.Minute, func() error { return l.nodesReady("lab-n1", "lab-n2", "lab-n3") })
}

// nodesReady is nil when Kubernetes lists exactly the nodes want, all Ready.
func (l *lab) nodesReady(want ...string) error {
	out, err := l.kubectl("get", "nodes", "--no-headers")
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			got[f[0]] = f[1]
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("nodes %v, want %v", got, want)
	}
	for _, n := range want {
		if got[n] != "Ready" {
			return fmt.Errorf("node %s is %q (nodes %v)", n, got[n], got)
		}
	}
	return nil
}
