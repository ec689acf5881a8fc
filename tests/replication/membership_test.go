package replication

import (
	"errors"
	"fmt"
	"testing"

	"kcore.dev/kcore/pkg/raftnode"
	"kcore.dev/kcore/tests/harness"
)

// TestJoinAndRemove grows a 3-replica cluster to 5, checks writes reach the
// new replicas, removes one and keeps writing.
func TestJoinAndRemove(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	writeItems(t, c, "three", 10)
	r3, r4 := c.Add(), c.Add()
	writeItems(t, c, "five", 10)
	c.WaitCaughtUp()
	c.WaitConverged()
	for _, r := range []*harness.Replica{r3, r4} {
		if n := len(r.Node().State().List(itemKind)); n != 20 {
			t.Fatalf("%s holds %d items, want 20", r.ID, n)
		}
	}
	wantVoters(t, c, 5)

	c.Remove(r3.Index)
	wantVoters(t, c, 4)
	writeItems(t, c, "four", 10)
	c.WaitCaughtUp()
	c.WaitConverged()
	if n := len(c.WaitLeader().Node().State().List(itemKind)); n != 30 {
		t.Fatalf("leader holds %d items, want 30", n)
	}
}

// TestRemovalThatLosesQuorumIsRefused stops one of three voters, then:
// removing a live voter is refused (two voters left, one healthy, quorum
// two), removing the stopped one is allowed, and so on down to the last
// voter, whose removal is refused.
func TestRemovalThatLosesQuorumIsRefused(t *testing.T) {
	c := harness.New(t, harness.Options{Replicas: 3})
	leader := c.WaitLeader()
	var live, stopped *harness.Replica
	for _, r := range c.Replicas() {
		if r.ID == leader.ID {
			continue
		}
		if stopped == nil {
			stopped = r
		} else {
			live = r
		}
	}
	c.Stop(stopped.Index)
	c.Eventually(harness.DefaultTimeout, func() error {
		ms, err := leader.Node().Members(ctxT(t))
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.ID == stopped.ID && m.Healthy {
				return fmt.Errorf("leader still sees %s healthy", m.ID)
			}
		}
		return nil
	})

	if err := leader.Node().RemoveServer(ctxT(t), live.ID); !errors.Is(err, raftnode.ErrQuorumLoss) {
		t.Fatalf("remove live voter with one of three down = %v, want ErrQuorumLoss", err)
	}
	wantVoters(t, c, 3)
	if err := leader.Node().RemoveServer(ctxT(t), "nobody"); !errors.Is(err, raftnode.ErrUnknownMember) {
		t.Fatalf("remove unknown = %v, want ErrUnknownMember", err)
	}
	if err := leader.Node().RemoveServer(ctxT(t), stopped.ID); err != nil {
		t.Fatalf("remove the stopped voter: %v", err)
	}
	writeItems(t, c, "two", 3)
	if err := leader.Node().RemoveServer(ctxT(t), live.ID); err != nil {
		t.Fatalf("remove a healthy voter of two: %v", err)
	}
	c.Stop(live.Index)
	writeItems(t, c, "one", 3)
	if err := leader.Node().RemoveServer(ctxT(t), leader.ID); !errors.Is(err, raftnode.ErrQuorumLoss) {
		t.Fatalf("remove the last voter = %v, want ErrQuorumLoss", err)
	}
	wantVoters(t, c, 1)
}

func wantVoters(t *testing.T, c *harness.Cluster, n int) {
	t.Helper()
	c.Eventually(harness.DefaultTimeout, func() error {
		l := c.Leader()
		if l == nil {
			return errors.New("no leader")
		}
		ms, err := l.Node().Members(ctxT(t))
		if err != nil {
			return err
		}
		voters := 0
		for _, m := range ms {
			if m.Suffrage == "voter" {
				voters++
			}
		}
		if voters != n {
			return fmt.Errorf("%d voters, want %d: %+v", voters, n, ms)
		}
		return nil
	})
}
