package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/harness"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestDeleteStuckOnAHeartbeatingNodeTimesOutAndForceFinishes: a node that
// keeps heartbeating but never reports its teardown holds the delete until
// DeleteTimeout; past it the cluster's Teardown condition names that node
// and the fix, and --force added then finishes the delete without it.
func TestDeleteStuckOnAHeartbeatingNodeTimesOutAndForceFinishes(t *testing.T) {
	e := newEnv(t, 1)
	clock := &testClock{now: time.Now()}
	e.cfg.Now = clock.Now
	e.cfg.LastSeen = func(string) (time.Time, bool) { return clock.Now(), true }
	e.cfg.DeleteTimeout = time.Minute
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	before := e.waitStates(c)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	e.waitPhase("lab", api.PhaseReady)

	e.putCluster(c, api.PhaseDeleting)
	var empty map[string]api.NodeState
	if err := harness.Poll(waitFor, func() error {
		empty = e.states("lab")
		for id, ns := range empty {
			if ns.Generation != before[id].Generation+1 {
				return fmt.Errorf("%s: generation %d", id, ns.Generation)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for id, ns := range empty {
		if id != "node-14" {
			e.report(ns)
		}
	}
	teardown := func(reason string) error {
		got, ok := e.cluster("lab")
		if !ok {
			return fmt.Errorf("cluster gone")
		}
		cond := findCondition(got.Status.Conditions, CondTeardown)
		if cond == nil || cond.Reason != reason {
			return fmt.Errorf("teardown condition %+v, want reason %s", cond, reason)
		}
		return nil
	}
	if err := harness.Poll(waitFor, func() error { return teardown(ReasonTearingDown) }); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute + time.Second)
	if err := harness.Poll(waitFor, func() error { return teardown(ReasonTeardownStuck) }); err != nil {
		t.Fatal(err)
	}
	got, _ := e.cluster("lab")
	msg := findCondition(got.Status.Conditions, CondTeardown).Message
	for _, want := range []string{"node-14", "kctl kubernetes delete lab --force"} {
		if !strings.Contains(msg, want) {
			t.Errorf("teardown message %q does not contain %q", msg, want)
		}
	}
	if len(e.states("lab")) != 1 {
		t.Fatalf("states left %v, want node-14's only", e.states("lab"))
	}

	// --force, as a delete escalated through the plan records it.
	obj, _ := e.state().Get(api.KindKubernetesCluster, "lab")
	var forced api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &forced); err != nil {
		t.Fatal(err)
	}
	forced.Status.Conditions = append(forced.Status.Conditions, api.Condition{Type: api.ConditionForceDelete, Status: StatusTrue, Reason: "Requested"})
	data, err := json.Marshal(forced)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: "lab", Data: data}})
	if err := harness.Poll(waitFor, func() error {
		if _, ok := e.cluster("lab"); ok {
			return fmt.Errorf("cluster still stored")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestTeardownOverdueAtTheBound: a teardown is overdue only past
// DeleteTimeout, not at it.
func TestTeardownOverdueAtTheBound(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	since := start.Format(time.RFC3339)
	tests := []struct {
		name string
		at   time.Duration
		want bool
	}{
		{name: "before", at: DefaultDeleteTimeout - time.Second},
		{name: "at the bound", at: DefaultDeleteTimeout},
		{name: "past the bound", at: DefaultDeleteTimeout + time.Second, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := overdue(since, start.Add(tt.at), DefaultDeleteTimeout); got != tt.want {
				t.Fatalf("overdue at %v = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
	if overdue("", start, DefaultDeleteTimeout) {
		t.Fatal("a teardown with no start is overdue")
	}
}
