package server

import "time"

// NodeReadyWindow is how recent a node's last heartbeat to the leader must be
// for the plan to count the node as ready: the orchestrator's heartbeat
// timeout, 18 beats of the agent's 5 s interval.
const NodeReadyWindow = 90 * time.Second

// liveness returns a node's readiness and RFC 3339 last heartbeat as this
// replica saw them (the leader, where plans are computed and heartbeats
// land); ok is false when no heartbeat arrived since the replica started, and
// the stored status stands.
func (s *Server) liveness(id string) (ready bool, last string, ok bool) {
	t, ok := s.LastSeen(id)
	if !ok {
		return false, "", false
	}
	return s.now().Sub(t) <= NodeReadyWindow, t.UTC().Format(time.RFC3339), true
}
