package harness

import (
	"context"
	"encoding/json"
	"fmt"

	"kcore.dev/kcore/pkg/store"
)

// Seed commits a put of v (encoded as JSON) as (kind, name) through the
// leader's raft log, as the controller's own writers (the orchestrator, the
// roller) do, and returns the index it was applied at. It bypasses the
// HTTP API on purpose: tests use it to stand in for those writers, e.g. to
// give a cluster the status the orchestrator would, or to store an object
// the API only writes through plan and apply. The put is unconditional, so
// a retry after an unknown outcome is harmless. Failures fail the test.
func (c *Cluster) Seed(kind, name string, v any) uint64 {
	c.t.Helper()
	data, ok := v.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			c.t.Fatalf("seed %s/%s: encode: %v", kind, name, err)
		}
	}
	return c.commit(store.Put{Kind: kind, Name: name, Data: data})
}

// Unseed commits an unconditional delete of (kind, name) through the
// leader's raft log, as the orchestrator removes a deleted cluster, and
// returns the index it was applied at.
func (c *Cluster) Unseed(kind, name string) uint64 {
	c.t.Helper()
	return c.commit(store.Delete{Kind: kind, Name: name})
}

// commit applies one store command through the leader, retrying through
// elections, and fails the test when it does not apply.
func (c *Cluster) commit(p interface {
	Command() (store.Command, error)
}) uint64 {
	c.t.Helper()
	cmd, err := p.Command()
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	res, err := c.ApplyRetry(ctx, cmd)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		c.t.Fatal(fmt.Errorf("commit %s through raft: %w", cmd.Type, err))
	}
	return res.Index
}
