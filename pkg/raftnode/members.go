package raftnode

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// Member is one server in the raft configuration.
type Member struct {
	// ID is the server's raft id.
	ID string `json:"id"`
	// Address is its raft address.
	Address string `json:"address"`
	// Suffrage is "voter", "nonvoter" or "staging".
	Suffrage string `json:"suffrage"`
	// Leader is true for the current leader.
	Leader bool `json:"leader"`
	// Healthy is false for a follower whose heartbeats from this leader
	// fail. Only the leader knows; on a follower every member reads healthy.
	Healthy bool `json:"healthy"`
}

func suffrage(s raft.ServerSuffrage) string {
	switch s {
	case raft.Voter:
		return "voter"
	case raft.Nonvoter:
		return "nonvoter"
	}
	return "staging"
}

// Members returns the latest raft configuration, in configuration order.
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	f := n.raft.GetConfiguration()
	if err := n.wait(ctx, f); err != nil {
		return nil, n.mapErr("list members", err)
	}
	leaderID, _ := n.Leader()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Member
	for _, s := range f.Configuration().Servers {
		out = append(out, Member{
			ID:       string(s.ID),
			Address:  string(s.Address),
			Suffrage: suffrage(s.Suffrage),
			Leader:   string(s.ID) == leaderID,
			Healthy:  !n.failed[s.ID],
		})
	}
	return out, nil
}

// AddVoter adds (or re-addresses) a voting member; the new replica catches
// up from the leader's log or latest snapshot. Leader only.
func (n *Node) AddVoter(ctx context.Context, id, addr string) error {
	if !n.IsLeader() {
		lid, laddr := n.Leader()
		return &ErrNotLeader{LeaderID: lid, LeaderAddr: laddr}
	}
	n.servers.begin()
	defer n.servers.end()
	if err := n.wait(ctx, n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, n.timeout(ctx))); err != nil {
		return n.mapErr(fmt.Sprintf("add voter %s", id), err)
	}
	n.log.Info("added voter", "id", id, "addr", addr)
	return nil
}

// HandOverTimeout bounds how long RemoveServer waits for another replica
// to lead after this one handed leadership over.
const HandOverTimeout = 10 * time.Second

// RemoveServer removes a member. Leader only. Removing the leader itself
// first hands leadership over to another voter (raft's leadership
// transfer) and returns an ErrNotLeader naming the new leader, which then
// removes it: a leader that removed itself would leave the others without
// one until an election timeout passed, and its own removal could not be
// recorded. It refuses with ErrQuorumLoss:
//   - removing the last voter;
//   - removing a voter when the voters left would have fewer healthy
//     members than their own quorum (floor(v/2)+1).
//
// Healthy means: the leader itself, or a follower whose heartbeats from
// this leader have not failed since it became leader (raft's
// FailedHeartbeat / ResumedHeartbeat observations). Removing a stopped
// replica is therefore allowed as long as the rest keeps a quorum.
func (n *Node) RemoveServer(ctx context.Context, id string) error {
	if !n.IsLeader() {
		lid, laddr := n.Leader()
		return &ErrNotLeader{LeaderID: lid, LeaderAddr: laddr}
	}
	f := n.raft.GetConfiguration()
	if err := n.wait(ctx, f); err != nil {
		return n.mapErr("remove server", err)
	}
	conf := f.Configuration()
	if err := n.checkRemoval(conf, raft.ServerID(id)); err != nil {
		return fmt.Errorf("remove server %s: %w", id, err)
	}
	if id == n.cfg.ID {
		return n.handOver(ctx)
	}
	n.servers.begin()
	defer n.servers.end()
	rf := n.raft.RemoveServer(raft.ServerID(id), f.Index(), n.timeout(ctx))
	if err := n.wait(ctx, rf); err != nil {
		return n.mapErr(fmt.Sprintf("remove server %s", id), err)
	}
	n.log.Info("removed server", "id", id)
	return nil
}

func (n *Node) checkRemoval(conf raft.Configuration, id raft.ServerID) error {
	found, voter := false, false
	var rest []raft.ServerID
	for _, s := range conf.Servers {
		if s.ID == id {
			found, voter = true, s.Suffrage == raft.Voter
			continue
		}
		if s.Suffrage == raft.Voter {
			rest = append(rest, s.ID)
		}
	}
	if !found {
		return ErrUnknownMember
	}
	if !voter {
		return nil
	}
	if len(rest) == 0 {
		return fmt.Errorf("it is the last voter: %w", ErrQuorumLoss)
	}
	n.mu.Lock()
	healthy := 0
	for _, s := range rest {
		if !n.failed[s] {
			healthy++
		}
	}
	n.mu.Unlock()
	if quorum := len(rest)/2 + 1; healthy < quorum {
		return fmt.Errorf("%d voters would remain, %d of them healthy, quorum needs %d: %w",
			len(rest), healthy, quorum, ErrQuorumLoss)
	}
	return nil
}

// handOver transfers leadership to another voter and waits, at most
// HandOverTimeout, until this replica follows a new leader; it returns an
// ErrNotLeader naming it.
func (n *Node) handOver(ctx context.Context) error {
	if err := n.wait(ctx, n.raft.LeadershipTransfer()); err != nil {
		return n.mapErr("hand leadership over", err)
	}
	ctx, cancel := context.WithTimeout(ctx, HandOverTimeout)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if id, addr := n.Leader(); id != "" && id != n.cfg.ID {
			n.log.Info("handed leadership over before removing this replica", "leader", id)
			return &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("hand leadership over: wait for a new leader: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
