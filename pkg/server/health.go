package server

import (
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/version"
)

// health answers this replica's view: its raft role, the leader, indexes
// and peers. Any replica answers for itself.
func (s *Server) health(c *call) (any, error) {
	leader, _ := s.backend.Leader()
	peers, err := s.members(c.r.Context())
	if err != nil {
		return nil, err
	}
	return apiv1.Health{
		Role:         s.backend.RaftState(),
		ID:           s.backend.ID(),
		Leader:       leader,
		LeaderAddr:   s.leaderHTTP(),
		LastIndex:    s.backend.LastIndex(),
		AppliedIndex: s.backend.State().LastIndex(),
		Peers:        peers,
		Schema:       version.Schema,
	}, nil
}
