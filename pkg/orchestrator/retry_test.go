package orchestrator

import (
	"fmt"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/tests/harness"
)

func TestNextRetryDoublesUpToTheInterval(t *testing.T) {
	for _, tc := range []struct {
		last, limit, want time.Duration
	}{
		{0, 2 * time.Second, firstRetry},
		{firstRetry, 2 * time.Second, 2 * firstRetry},
		{time.Second, 2 * time.Second, 2 * time.Second},
		{2 * time.Second, 2 * time.Second, 2 * time.Second},
		{0, 20 * time.Millisecond, 20 * time.Millisecond},
	} {
		if got := nextRetry(tc.last, tc.limit); got != tc.want {
			t.Errorf("nextRetry(%v, %v) = %v, want %v", tc.last, tc.limit, got, tc.want)
		}
	}
}

// TestReadyFollowsHealthBeforeTheRetryInterval fails the API's /readyz
// when every member has applied its state, then lets it pass: with a
// retry interval of an hour, the cluster still turns ready, because the
// first retries after a failed check come sooner.
func TestReadyFollowsHealthBeforeTheRetryInterval(t *testing.T) {
	e := newEnv(t, 1)
	e.cfg.RetryInterval = time.Hour
	c := labCluster(t, "lab", e.apiPort())
	e.registerNodes(c)
	e.putCluster(c, api.PhaseBootstrapping)
	e.runOrchestrator()
	e.waitStates(c)
	e.health.apiFail.Store(true)
	e.health.start(c, e.secretsOf("lab"), e.apiLn)
	e.reportAll("lab")
	if err := harness.Poll(waitFor, func() error {
		cur, _ := e.cluster("lab")
		if cond := findCondition(cur.Status.Conditions, CondAPIReady); cond == nil || cond.Status != StatusFalse {
			return fmt.Errorf("APIReady %+v, want False", cond)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Let the passes its own status write wakes run out: from here on only
	// the retry timer runs one.
	time.Sleep(time.Second)
	e.health.apiFail.Store(false)
	e.waitPhase("lab", api.PhaseReady)
}
