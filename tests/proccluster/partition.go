package proccluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"kcore.dev/kcore/tests/harness"
)

// HasNetwork reports whether the replicas run in their own network
// namespaces (Options.Netns), which the partition verbs need.
func (c *Cluster) HasNetwork() bool { return c.net != nil }

// Addr returns replica i's address in its namespace, "" without one.
func (c *Cluster) Addr(i int) string {
	if c.net == nil {
		return ""
	}
	return c.net.addr(i)
}

// PartitionOneWay drops every packet replica from sends to replica to
// (nftables in to's namespace); to's packets still reach from. Heal ends
// it.
func (c *Cluster) PartitionOneWay(from, to int) {
	c.t.Helper()
	c.needNetwork("partition")
	if err := c.net.drop(from, to); err != nil {
		c.t.Fatal(err)
	}
}

// Partition cuts replicas a and b off from each other both ways.
func (c *Cluster) Partition(a, b int) {
	c.t.Helper()
	c.PartitionOneWay(a, b)
	c.PartitionOneWay(b, a)
}

// Isolate cuts replica i off from every other replica both ways; clients
// still reach it, as a client on i's side of a real partition would.
func (c *Cluster) Isolate(i int) {
	c.t.Helper()
	for j := range c.Replicas() {
		if j != i {
			c.Partition(i, j)
		}
	}
}

// Heal removes every partition.
func (c *Cluster) Heal() {
	c.t.Helper()
	c.needNetwork("heal")
	if err := c.net.heal(); err != nil {
		c.t.Fatal(err)
	}
}

func (c *Cluster) needNetwork(verb string) {
	c.t.Helper()
	if c.net == nil {
		c.t.Fatalf("%s: the cluster has no network of its own (Options.Netns)", verb)
	}
}

// ErrStillMember: a removal did not take effect within DefaultTimeout,
// e.g. because the leader refused it (removing a voter while another is
// unreachable would leave no quorum).
var ErrStillMember = errors.New("replica still a member")

// Remove takes replica i out of the raft configuration and kills it,
// failing the test when it cannot (TryRemove).
func (c *Cluster) Remove(i int) {
	c.t.Helper()
	if err := c.TryRemove(i); err != nil {
		c.t.Fatal(err)
	}
}

// TryRemove takes replica i out of the raft configuration (DELETE
// /v1/members/ID through any replica, retried until the leader's
// configuration no longer has it, at most DefaultTimeout), then kills its
// process; its data dir is kept until Rejoin. When the removal does not
// take effect it returns ErrStillMember and leaves the replica running.
func (c *Cluster) TryRemove(i int) error {
	c.t.Helper()
	r := c.Replica(i)
	err := harness.Poll(DefaultTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		rmErr := c.admin.RemoveMember(ctx, r.ID)
		ids, err := c.memberIDs(ctx)
		if err != nil {
			return err
		}
		if slices.Contains(ids, r.ID) {
			return fmt.Errorf("%s in %v (remove: %w)", r.ID, ids, rmErr)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w: %w", r.ID, ErrStillMember, err)
	}
	c.Kill(i)
	return nil
}

// Rejoin starts a removed replica i again as a new, empty member: its
// data dir is wiped and it joins through the other replicas on its old
// addresses, as `kcore-controller --join` does. It waits until the leader
// counts it a voter.
func (c *Cluster) Rejoin(i int) {
	c.t.Helper()
	r := c.Replica(i)
	if c.proc(r).Running() {
		c.t.Fatalf("rejoin %s: still running", r.ID)
	}
	if err := os.RemoveAll(r.DataDir); err != nil {
		c.t.Fatalf("rejoin %s: %v", r.ID, err)
	}
	c.mu.Lock()
	for _, o := range c.replicas {
		if o != r {
			r.spec.Join = append(r.spec.Join, o.API)
		}
	}
	c.mu.Unlock()
	c.Restart(i)
	c.mu.Lock()
	r.spec.Join = nil
	c.mu.Unlock()
	c.Eventually(DefaultTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
		defer cancel()
		ids, err := c.memberIDs(ctx)
		if err != nil {
			return err
		}
		if !slices.Contains(ids, r.ID) {
			return fmt.Errorf("%s not yet a member of %v", r.ID, ids)
		}
		return nil
	})
}

// memberIDs returns the raft configuration a leader answers with.
func (c *Cluster) memberIDs(ctx context.Context) ([]string, error) {
	ms, err := c.admin.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
