package proccluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/tests/harness"
)

// Eventually polls cond until it returns nil, failing the test with cond's
// last error when timeout passes first.
func (c *Cluster) Eventually(timeout time.Duration, cond func() error) {
	c.t.Helper()
	if err := harness.Poll(timeout, cond); err != nil {
		c.t.Fatal(err)
	}
}

// Health returns replica r's own view (GET /v1/health on r alone).
func (c *Cluster) Health(r *Replica) (apiv1.Health, error) {
	return c.health(r)
}

func (c *Cluster) health(r *Replica) (apiv1.Health, error) {
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	h, err := c.admin.HealthOf(ctx, r.API)
	if err != nil {
		return apiv1.Health{}, fmt.Errorf("health of %s: %w", r.ID, err)
	}
	return h, nil
}

// leader returns the running replica that says it is leader, once every
// running replica names it.
func (c *Cluster) leader() (*Replica, error) {
	running := c.Running()
	if len(running) == 0 {
		return nil, errors.New("no replica running")
	}
	var leader *Replica
	seen := map[string]string{}
	for _, r := range running {
		h, err := c.health(r)
		if err != nil {
			return nil, err
		}
		if h.Role == "leader" {
			leader = r
		}
		seen[r.ID] = h.Leader
	}
	if leader == nil {
		return nil, fmt.Errorf("no leader among %d running replicas", len(running))
	}
	for id, l := range seen {
		if l != leader.ID {
			return nil, fmt.Errorf("%s sees leader %q, not %s", id, l, leader.ID)
		}
	}
	return leader, nil
}

// Leader waits until one running replica is leader and every running
// replica agrees, and returns it.
func (c *Cluster) Leader() *Replica {
	c.t.Helper()
	var l *Replica
	c.Eventually(DefaultTimeout, func() error {
		var err error
		l, err = c.leader()
		return err
	})
	return l
}

// WaitCaughtUp waits for a leader, then until every running replica has
// applied to its state every command the leader had applied when the wait
// began. The target is the leader's applied index, not its last log index:
// a log may end in entries no state applies (a new term's no-op, a
// barrier), and when no write follows them no replica ever reports their
// index applied.
func (c *Cluster) WaitCaughtUp() {
	c.t.Helper()
	l := c.Leader()
	h, err := c.health(l)
	if err != nil {
		c.t.Fatal(err)
	}
	target := h.AppliedIndex
	c.Eventually(DefaultTimeout, func() error {
		for _, r := range c.Running() {
			h, err := c.health(r)
			if err != nil {
				return err
			}
			if h.AppliedIndex < target {
				return fmt.Errorf("%s applied %d of %d", r.ID, h.AppliedIndex, target)
			}
		}
		return nil
	})
}
