package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// memberHTTP is the HTTP address recorded for raft id, "" when none is.
func (s *Server) memberHTTP(id string) string {
	return s.memberData(id).HTTPAddr
}

// memberData is what raft id recorded, empty when it recorded nothing.
func (s *Server) memberData(id string) apiv1.MemberData {
	var m apiv1.MemberData
	o, ok := s.backend.State().Get(apiv1.KindMember, id)
	if !ok {
		return m
	}
	if err := json.Unmarshal(o.Data, &m); err != nil {
		return apiv1.MemberData{}
	}
	return m
}

// members joins the raft configuration with the recorded HTTP addresses.
func (s *Server) members(ctx context.Context) ([]apiv1.Member, error) {
	peers, err := s.backend.Peers(ctx)
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	leader, _ := s.backend.Leader()
	out := make([]apiv1.Member, 0, len(peers))
	for _, p := range peers {
		m := s.memberData(p.ID)
		out = append(out, apiv1.Member{
			ID: p.ID, RaftAddr: p.Addr, HTTPAddr: m.HTTPAddr,
			Suffrage: p.Suffrage, Leader: p.ID == leader, RecordedSchema: m.Schema,
		})
	}
	return out, nil
}

func (s *Server) listMembers(c *call) (any, error) {
	return s.members(c.r.Context())
}

func (s *Server) addMember(c *call) (any, error) {
	var req apiv1.AddMemberRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	if req.ID == "" || req.RaftAddr == "" || req.HTTPAddr == "" {
		return nil, badRequest("id, raftAddr and httpAddr are required")
	}
	c.object = apiv1.KindMember + "/" + req.ID
	if err := s.backend.AddVoter(c.r.Context(), req.ID, req.RaftAddr); err != nil {
		return nil, fmt.Errorf("add member %s: %w", req.ID, err)
	}
	idx, err := s.RecordMember(c.r.Context(), req.ID, req.RaftAddr, req.HTTPAddr, req.Schema)
	if err != nil {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// RecordMember stores (or refreshes) the Member object of a replica so
// followers can forward to it when it leads, with the controller schema it
// reads and writes (version.Schema of its build; the schema gates of a
// ClusterUpdate are checked against it). It must run on the leader; it
// writes nothing when the record is already current.
func (s *Server) RecordMember(ctx context.Context, id, raftAddr, httpAddr string, schema int) (uint64, error) {
	idx, _, err := s.recordMember(ctx, id, raftAddr, httpAddr, schema)
	return idx, err
}

// recordMember is RecordMember that also says whether it wrote.
func (s *Server) recordMember(ctx context.Context, id, raftAddr, httpAddr string, schema int) (uint64, bool, error) {
	data, err := json.Marshal(apiv1.MemberData{RaftAddr: raftAddr, HTTPAddr: httpAddr, Schema: schema})
	if err != nil {
		return 0, false, fmt.Errorf("encode member %s: %w", id, err)
	}
	if cur, ok := s.backend.State().Get(apiv1.KindMember, id); ok && sameJSON(cur.Data, data) {
		return cur.ModifyIndex, false, nil
	}
	idx, err := s.apply(ctx, store.Put{Kind: apiv1.KindMember, Name: id, Data: data})
	return idx, err == nil, err
}

func (s *Server) removeMember(c *call) (any, error) {
	id := c.r.PathValue("id")
	if err := s.checkRemainingVoters(c.r.Context(), id); err != nil {
		return nil, err
	}
	err := s.backend.RemoveServer(c.r.Context(), id)
	if errors.Is(err, ErrNotLeader) && id == s.backend.ID() {
		return s.forwardRemoval(c, err)
	}
	if err != nil {
		return nil, fmt.Errorf("remove member %s: %w", id, err)
	}
	idx, err := s.apply(c.r.Context(), store.Delete{Kind: apiv1.KindMember, Name: id})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return apiv1.WriteResponse{Index: idx}, nil
}

// forwardRemoval passes the removal of this replica on to the leader: the
// backend handed leadership over (cause) so that the cluster keeps one,
// and the new leader removes this replica, records it, audits the call
// and answers. The hop is allowed for a call that was forwarded here too:
// the new leader removes another replica than itself, so it does not
// forward again.
func (s *Server) forwardRemoval(c *call, cause error) (any, error) {
	addr := s.leaderHTTP()
	if s.forwarder == nil || addr == "" {
		return nil, s.noLeader(cause)
	}
	if err := s.forward(c, addr); err != nil {
		return nil, s.noLeader(err)
	}
	c.wrote, c.skipAudit = true, true
	return nil, nil
}
