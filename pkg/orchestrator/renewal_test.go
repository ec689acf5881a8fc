package orchestrator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// renewalPasses bounds the passes a renewal takes to reach every node: one
// to reissue and publish, one to see the reports.
const renewalPasses = 4

// TestRenewalRepublishesFilesAndRestartsNothing runs the orchestrator (real
// raft replica, real sealed PKI) on its injected clock with the shortest
// leaves: a ready cluster, the clock moved past two thirds of the leaves'
// lifetime, is re-published with every leaf certificate file rewritten and
// not one unit's input hash changed on any node, so no agent restarts
// anything.
func TestRenewalRepublishesFilesAndRestartsNothing(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.Lifetime = pki.Lifetime{Leaf: pki.MinLeafValidity}
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	clock := time.Now().UTC().Truncate(time.Second)
	cfg := e.cfg
	cfg.Node = e.leader()
	cfg.Now = func() time.Time { return clock }
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.started = time.Now()
	e.reconcileOnce(o, false)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.reconcileOnce(o, true)
	if got, _ := e.cluster("lab"); got.Status.Phase != api.PhaseReady {
		t.Fatalf("phase %q, want ready: %+v", got.Status.Phase, got.Status.Conditions)
	}
	before := e.states("lab")

	clock = clock.Add(pki.MinLeafValidity/pki.RenewDen*pki.RenewNum + time.Second)
	var after map[string]api.NodeState
	for i := 0; ; i++ {
		if i == renewalPasses {
			t.Fatalf("after %d passes: not every node re-published: %v", renewalPasses, generations(after))
		}
		e.reconcileOnce(o, false)
		e.reportAll("lab")
		after = e.states("lab")
		if allBumped(before, after) {
			break
		}
	}
	for id, ns := range after {
		old := map[string]string{}
		for _, u := range before[id].Units {
			old[u.Name] = u.InputHash
		}
		for _, u := range ns.Units {
			if old[u.Name] != u.InputHash {
				t.Errorf("%s: %s input hash changed on a renewal: the agent would restart it", id, u.Name)
			}
		}
		oldFiles := map[string]string{}
		for _, f := range before[id].Files {
			oldFiles[f.Path] = f.Content
		}
		renewed := 0
		for _, f := range ns.Files {
			if f.Secret || !strings.HasSuffix(f.Path, ".crt") || strings.HasSuffix(f.Path, "ca.crt") {
				continue
			}
			if oldFiles[f.Path] == f.Content {
				t.Errorf("%s: %s not rewritten by the renewal", id, f.Path)
			}
			renewed++
		}
		if renewed == 0 {
			t.Errorf("%s: no leaf certificate file", id)
		}
	}
}

func allBumped(before, after map[string]api.NodeState) bool {
	for id, ns := range before {
		if after[id].Generation <= ns.Generation {
			return false
		}
	}
	return true
}

func generations(states map[string]api.NodeState) string {
	var b strings.Builder
	for id, ns := range states {
		fmt.Fprintf(&b, "%s=%d ", id, ns.Generation)
	}
	return b.String()
}
