package chaos

import (
	"sync"
	"time"

	"kcore.dev/kcore/tests/proccluster"
)

// inject waits f's gap, applies f and heals it after its hold. probe is
// called with the index of a replica that may believe it still leads
// while it should not: as soon as a paused replica runs again, and while
// a partition cuts one off (concurrently with the hold). A removal the
// cluster refuses (it would leave no quorum while a replica still
// recovers from an earlier fault) is logged and skipped: refusing it is
// the controller's promise, not a failure.
func inject(c *proccluster.Cluster, f Fault, probe func(int), logf func(string, ...any)) {
	hold(f.Gap)
	i := f.Replica
	if f.Leader() {
		i = c.Leader().Index
	}
	n := len(c.Replicas())
	switch f.Kind {
	case KillRestart, KillLeader:
		c.Kill(i)
		hold(f.Hold)
		c.Restart(i)
	case PauseResume, PauseLeader:
		c.Pause(i)
		hold(f.Hold)
		c.Resume(i)
		probe(i)
	case RemoveRejoin:
		if err := c.TryRemove(i); err != nil {
			logf("%s skipped: %v", f, err)
			return
		}
		hold(f.Hold)
		c.Rejoin(i)
	case IsolateLeader, IsolateReplica:
		partitioned(c, f.Hold, i, probe, func() { c.Isolate(i) })
	case MuteLeader:
		partitioned(c, f.Hold, i, probe, func() {
			for j := range n {
				if j != i {
					c.PartitionOneWay(i, j)
				}
			}
		})
	case DeafLeader:
		partitioned(c, f.Hold, i, probe, func() {
			for j := range n {
				if j != i {
					c.PartitionOneWay(j, i)
				}
			}
		})
	case PartitionPair:
		partitioned(c, f.Hold, i, probe, func() { c.Partition(i, (i+1)%n) })
	}
}

// partitioned applies cut, probes replica i while the partition holds,
// and heals every partition after d.
func partitioned(c *proccluster.Cluster, d time.Duration, i int, probe func(int), cut func()) {
	cut()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		probe(i)
	}()
	hold(d)
	c.Heal()
	wg.Wait()
}

// hold lets a schedule's time pass: the workload runs meanwhile. It waits
// for nothing to happen, so it is no poll.
func hold(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}
