package raftnode

import (
	"github.com/hashicorp/raft"
)

// LogBecameLeader is the message a node logs (at info, with the raft term)
// when it enters the leader state; tests/chaos reads it from every
// replica's log to check that no term had two leaders.
const LogBecameLeader = "became raft leader"

// watchRaft follows raft's observations: leadership changes (fanned out to
// LeaderCh subscribers) and follower heartbeat failures (the health used by
// RemoveServer's quorum check).
func (n *Node) watchRaft() {
	n.obsCh = make(chan raft.Observation, 64)
	// Blocking, so no leadership change is dropped; the loop below never
	// blocks for long.
	n.observer = raft.NewObserver(n.obsCh, true, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.RaftState, raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.PeerObservation:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(n.observer)
	n.done.Add(1)
	go func() {
		defer n.done.Done()
		for {
			select {
			case <-n.stop:
				return
			case o := <-n.obsCh:
				n.observe(o)
			}
		}
	}()
}

func (n *Node) observe(o raft.Observation) {
	switch d := o.Data.(type) {
	case raft.RaftState:
		n.servers.drop()
		n.setLeader(d == raft.Leader)
		if d == raft.Leader {
			n.logLeaderTerm()
		}
	case raft.FailedHeartbeatObservation:
		n.mu.Lock()
		if !n.failed[d.PeerID] {
			n.log.Warn("follower stopped answering heartbeats", "peer", d.PeerID, "last_contact", d.LastContact)
		}
		n.failed[d.PeerID] = true
		n.mu.Unlock()
	case raft.ResumedHeartbeatObservation:
		n.mu.Lock()
		delete(n.failed, d.PeerID)
		n.mu.Unlock()
		n.log.Info("follower answers heartbeats again", "peer", d.PeerID)
	case raft.PeerObservation:
		n.servers.drop()
		if d.Removed {
			n.mu.Lock()
			delete(n.failed, d.Peer.ID)
			n.mu.Unlock()
		}
	}
}

// setLeader records a leadership change and tells every subscriber the
// latest value, dropping a value a slow subscriber has not read yet.
func (n *Node) setLeader(leader bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if leader == n.isLeader {
		return
	}
	n.isLeader = leader
	// A new term as leader starts with every follower presumed healthy
	// until its heartbeats fail.
	n.failed = map[raft.ServerID]bool{}
	for _, ch := range n.subs {
		select {
		case <-ch:
		default:
		}
		ch <- leader
	}
}

// LeaderCh returns a new channel that receives true when this replica
// becomes leader and false when it stops being leader. It holds only the
// latest value: a slow reader misses intermediate flips, never the final
// state. The channel is closed on Shutdown. Each call makes a new
// subscription.
func (n *Node) LeaderCh() <-chan bool {
	ch := make(chan bool, 1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.isLeader {
		ch <- true
	}
	n.subs = append(n.subs, ch)
	return ch
}

// logLeaderTerm logs LogBecameLeader with the term this node leads in. The
// state and term are separate reads, so the term is read on both sides of
// the state: equal, it was the term throughout and the node led in it;
// otherwise (or no longer leader) nothing is logged rather than a guess.
func (n *Node) logLeaderTerm() {
	before := n.raft.CurrentTerm()
	state := n.raft.State()
	after := n.raft.CurrentTerm()
	if state == raft.Leader && before == after {
		n.log.Info(LogBecameLeader, "term", before)
	}
}
