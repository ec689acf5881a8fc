package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// controllerPorts are the API ports of controller-0..2 in scripts/lab.sh.
func controllerPorts() []string { return []string{"7443", "7445", "7447"} }

// testLeaderStoppedDuringBootstrap is scenario (5), on a lab whose cluster
// is not applied yet: the controller leader is killed while the cluster
// bootstraps; a new leader takes over and the cluster still reaches ready.
func testLeaderStoppedDuringBootstrap(t *testing.T, l *lab) {
	if out, err := l.kctl(2*time.Minute, "kubernetes", "apply", "--yes", "-f", l.manifestFile()); err != nil {
		t.Fatalf("kctl kubernetes apply: %v\n%s", err, out)
	}
	eventually(t, "a node to start its first unit", time.Minute, func() error {
		for _, n := range labNodes() {
			if s, err := l.units(n.name); err == nil && len(s.Units) > 0 {
				return nil
			}
		}
		return fmt.Errorf("no unit started yet")
	})
	phase := firstLine(l.healthOutput())
	if !strings.Contains(phase, "bootstrapping") {
		t.Fatalf("want the cluster bootstrapping when the leader stops, got %q", phase)
	}
	old := l.leader(t)
	pid := l.controllerPID(t, old)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill controller %s (pid %d): %v", old, pid, err)
	}
	t.Logf("killed the controller leader %s (pid %d) during bootstrap (%s)", old, pid, phase)
	eventually(t, "a new leader", time.Minute, func() error {
		if now := l.leaderOrEmpty(); now == "" || now == old {
			return fmt.Errorf("leader %q", now)
		}
		return nil
	})
	start := time.Now()
	eventually(t, "cluster ready under the new leader", 5*time.Minute, l.healthy)
	t.Logf("ready %s after the leader was killed", time.Since(start).Round(time.Second))
	eventually(t, "/readyz through the VIP", 30*time.Second, l.readyz)
}

type member struct {
	HTTPAddr string `json:"httpAddr"`
	Leader   bool   `json:"leader"`
}

// leaderOrEmpty is the leading replica's API address, or "".
func (l *lab) leaderOrEmpty() string {
	out, err := l.kctl(10*time.Second, "controller", "members", "-o", "json")
	if err != nil {
		return ""
	}
	var ms []member
	if json.Unmarshal([]byte(out), &ms) != nil {
		return ""
	}
	for _, m := range ms {
		if m.Leader {
			return m.HTTPAddr
		}
	}
	return ""
}

func (l *lab) leader(t *testing.T) string {
	t.Helper()
	var addr string
	eventually(t, "the controller leader", 30*time.Second, func() error {
		if addr = l.leaderOrEmpty(); addr == "" {
			return fmt.Errorf("no leader")
		}
		return nil
	})
	return addr
}

// controllerPID is the pid of the replica serving addr.
func (l *lab) controllerPID(t *testing.T, addr string) int {
	t.Helper()
	for i, p := range controllerPorts() {
		if !strings.HasSuffix(addr, ":"+p) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(l.dir, "run", fmt.Sprintf("controller-%d.pid", i)))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	t.Fatalf("no lab controller serves %s", addr)
	return 0
}
