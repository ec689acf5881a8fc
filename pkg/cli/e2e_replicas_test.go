package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/controller"
)

// TestKctlFollowsTheLeader runs three real replicas, stops the leader, and
// checks kctl (whose context lists the dead leader first) still answers
// from the survivors once they elect a new leader.
func TestKctlFollowsTheLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("three raft replicas: skipped with -short")
	}
	e := newKctlEnv(t)
	pkiDir := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", "127.0.0.1:7443,127.0.0.1:7444,127.0.0.1:7445", "--out", pkiDir)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	byAddr := map[string]*controller.Controller{}
	var first string
	for i := range 3 {
		cfg := controller.Config{
			DataDir:      filepath.Join(e.dir, fmt.Sprintf("data-%d", i)),
			Listen:       "127.0.0.1:0",
			PKIDir:       filepath.Join(pkiDir, fmt.Sprintf("controller-%d", i)),
			FastTimeouts: true,
			Bootstrap:    i == 0,
		}
		if i > 0 {
			cfg.Join = []string{first}
		}
		c, err := controller.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if i == 0 {
			first = c.HTTPAddr()
		}
		byAddr[c.HTTPAddr()] = c
	}

	setControllers(t, e, first)
	leader := pollMembers(t, e, func(rows [][]string) bool { return len(rows) == 3 && leaderOf(rows) != "" })
	// List the leader first so the next kctl run dials it first.
	addrs := []string{leader}
	for a := range byAddr {
		if a != leader {
			addrs = append(addrs, a)
		}
	}
	setControllers(t, e, addrs...)

	if err := byAddr[leader].Close(); err != nil {
		t.Fatal(err)
	}
	next := pollMembers(t, e, func(rows [][]string) bool { l := leaderOf(rows); return l != "" && l != leader })
	if _, ok := byAddr[next]; !ok {
		t.Fatalf("new leader %s is not a survivor", next)
	}
	// A write goes through too: the client finds the new leader.
	if out := e.must("node", "token", "create", "--node", "node-7"); !strings.Contains(out, "--join-token") {
		t.Fatalf("token after failover:\n%s", out)
	}
}

// setControllers points the current context at addrs.
func setControllers(t *testing.T, e *kctlEnv, addrs ...string) {
	t.Helper()
	cfg := e.load()
	x, err := cfg.Current()
	if err != nil {
		t.Fatal(err)
	}
	x.Controllers = nil
	for _, a := range addrs {
		x.Controllers = append(x.Controllers, "https://"+a)
	}
	if err := cfg.Save(e.config); err != nil {
		t.Fatal(err)
	}
}

// pollMembers runs kctl controller members until ok accepts its rows, and
// returns the leader's HTTP address.
func pollMembers(t *testing.T, e *kctlEnv, ok func([][]string) bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for time.Now().Before(deadline) {
		out, _, err := e.run("controller", "members")
		if err == nil {
			var rows [][]string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
				rows = append(rows, strings.Fields(line))
			}
			if ok(rows) {
				return leaderOf(rows)
			}
			last = out
		} else {
			last = err.Error()
		}
		<-tick.C
	}
	t.Fatalf("members never reached the wanted state; last:\n%s", last)
	return ""
}

// leaderOf returns the HTTP address of the row marked leader.
func leaderOf(rows [][]string) string {
	for _, r := range rows {
		if len(r) == 7 && r[4] == "*" {
			return r[2]
		}
	}
	return ""
}
