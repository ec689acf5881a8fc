package orchestrator

import (
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Restart churn: a unit that crashed and is being restarted is expected
// while a cluster changes (a kube-apiserver restart costs its node's
// controller-manager and scheduler their leases), so a transitional phase
// waits for it; past these limits it is a crash loop and degrades.
const (
	// crashLoopRestarts is how many restarts since the apply make a crash loop.
	crashLoopRestarts = 3
	// crashLoopAfter is how long a unit may stay down before it is a crash loop.
	crashLoopAfter = 60 * time.Second
	// itemKindUnit is the report item kind of a unit (pkg/agent.KindUnit).
	itemKindUnit = "unit"
)

// churnTracker remembers since when each crashed unit has been reported
// restarting; it lives on the leader only, so a new leader starts the
// clock again.
type churnTracker struct {
	since map[string]map[string]time.Time // cluster → node/unit → first seen
	next  map[string]time.Time            // this pass's entries for the cluster observed
}

// begin starts a pass over one cluster's reports.
func (t *churnTracker) begin() {
	t.next = map[string]time.Time{}
}

// end keeps only the entries of cluster seen in this pass.
func (t *churnTracker) end(cluster string) {
	if t.since == nil {
		t.since = map[string]map[string]time.Time{}
	}
	if len(t.next) == 0 {
		delete(t.since, cluster)
	} else {
		t.since[cluster] = t.next
	}
	t.next = nil
}

// restarting reports whether a failed item is restart churn rather than a
// failure: a unit the runtime is restarting, restarted fewer than
// crashLoopRestarts times since the apply and reported down for less than
// crashLoopAfter. Other failed items (files, volumes, tasks, a unit that
// stays down) are failures.
func (t *churnTracker) restarting(cluster, node string, it api.ItemStatus, now time.Time) bool {
	if it.Kind != itemKindUnit || !it.Restarting || it.Restarts >= crashLoopRestarts {
		return false
	}
	key := node + "/" + it.Name
	first, ok := t.since[cluster][key]
	if !ok {
		first = now
	}
	t.next[key] = first
	return now.Sub(first) < crashLoopAfter
}
