package raftnode

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// ErrNotLeader is returned for a write or leader-only call made on a
// replica that is not the leader. LeaderID and LeaderAddr (the raft
// address) name the leader this replica knows; both are empty when there is
// none. Test with errors.As(err, new(*ErrNotLeader)).
type ErrNotLeader struct {
	LeaderID   string
	LeaderAddr string
}

func (e *ErrNotLeader) Error() string {
	if e.LeaderID == "" {
		return "not the leader: no leader elected"
	}
	return fmt.Sprintf("not the leader: leader is %s at %s", e.LeaderID, e.LeaderAddr)
}

var (
	// ErrLeadershipLost means leadership was lost while a command was in
	// flight: it may or may not have been committed. Re-read before
	// retrying, or retry a command that is idempotent or guarded by CAS.
	ErrLeadershipLost = errors.New("leadership lost while committing; outcome unknown")
	// ErrQuorumLoss refuses a membership change that would remove the last
	// voter or leave fewer healthy voters than the new configuration's
	// quorum.
	ErrQuorumLoss = errors.New("change would lose quorum")
	// ErrUnknownMember means the server id is not in the configuration.
	ErrUnknownMember = errors.New("unknown member")
	// ErrShutdown means the node is shut down.
	ErrShutdown = errors.New("raft node shut down")
)

// mapErr turns raft's errors into this package's, so callers test with
// errors.Is/As and never see raft's sentinels.
func (n *Node) mapErr(action string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		id, addr := n.Leader()
		return &ErrNotLeader{LeaderID: id, LeaderAddr: addr}
	case errors.Is(err, raft.ErrLeadershipLost), errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("%s: %w", action, ErrLeadershipLost)
	case errors.Is(err, raft.ErrRaftShutdown):
		return fmt.Errorf("%s: %w", action, ErrShutdown)
	}
	return fmt.Errorf("%s: %w", action, err)
}
