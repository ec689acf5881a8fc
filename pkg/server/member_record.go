package server

import (
	"net"

	"kcore.dev/kcore/pkg/apiv1"
)

// Bounds of PUT /v1/members/{id}.
const (
	// MinMemberSchema is the oldest controller schema a replica may record
	// (schemas count from 1; 0 means "recorded none" and is not sent).
	MinMemberSchema = 1
	// MaxMemberSchema is the newest controller schema a replica may record.
	// It is not the leader's own schema: in a rolling upgrade a replica of
	// a newer build records its schema on a leader of an older one (the
	// cluster schema never exceeds the leader's own, see
	// store.ClusterSchema). It only turns away numbers no build will reach.
	MaxMemberSchema = 1000
	// MaxMemberBody is the request body limit of PUT /v1/members/{id}: two
	// addresses and a number, far below it.
	MaxMemberBody = 4 << 10
)

// recordOwnMember is PUT /v1/members/{id}: a controller replica that is
// already in the raft configuration records its own Member object (raft
// address, API address, the schema it reads), as it does on every start
// and leader change. The caller must be the replica {id} (callerIsReplica),
// the raft address must be the one the configuration holds (recording
// never moves a server) and it never adds or promotes a voter: that is
// POST /v1/members. A call that changes nothing writes and audits nothing.
func (s *Server) recordOwnMember(c *call) (any, error) {
	id := c.r.PathValue("id")
	peers, err := s.backend.Peers(c.r.Context())
	if err != nil {
		return nil, err
	}
	var peer *Peer
	for i := range peers {
		if peers[i].ID == id {
			peer = &peers[i]
		}
	}
	if !callerIsReplica(c, id, peer) {
		return nil, forbidden("controller %q may only record its own member, not %q", c.subject(), id)
	}
	if peer == nil {
		return nil, notFound("controller replica %q is not in the raft configuration: add it with POST %s", id, apiv1.PathMembers)
	}
	var req apiv1.RecordMemberRequest
	if err := decodeStrict(c.r.Body, &req); err != nil {
		return nil, err
	}
	if err := checkMemberRecord(req); err != nil {
		return nil, err
	}
	if req.RaftAddr != peer.Addr {
		return nil, newError(apiv1.CodeConflict, "controller replica %q has raft address %s in the raft configuration, not %s: recording does not move a server (remove it and add it again)", id, peer.Addr, req.RaftAddr)
	}
	idx, wrote, err := s.recordMember(c.r.Context(), id, req.RaftAddr, req.HTTPAddr, req.Schema)
	if err != nil {
		return nil, err
	}
	c.skipAudit = !wrote
	return apiv1.WriteResponse{Index: idx}, nil
}

// callerIsReplica reports whether the caller is controller replica id,
// whose server in the raft configuration is peer (nil when none is). It is
// when either
//
//   - its certificate's common name is id: replicas started with --id set
//     to the name `kctl controller init` gave their certificate
//     (controller-<i>); or
//   - it called this replica directly (not through another replica's
//     forwarding, which passes on only a name) with a certificate issued
//     for the host of the raft address the configuration holds for id: a
//     replica's id defaults to its advertise address, and `kctl controller
//     init` issues each replica's certificate for its address's host.
//
// Replicas sharing a host (each certificate also names 127.0.0.1 and
// localhost) are not told apart by the second rule; they share that host's
// trust. A replica's key may forward any call under any name anyway (see
// docs/security.md): the rule keeps replicas from recording each other by
// mistake and keeps the audit log's subject true.
func callerIsReplica(c *call, id string, peer *Peer) bool {
	if c.id == nil || c.id.Role != apiv1.RoleController {
		return false
	}
	if c.id.Subject == id {
		return true
	}
	// Not forwarded, the identity is the leaf of the connection's client
	// chain, which the server verified before naming the caller by it.
	if peer == nil || c.forwarded || c.id.Expired || c.r.TLS == nil || len(c.r.TLS.PeerCertificates) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(peer.Addr)
	if err != nil || host == "" {
		return false
	}
	return c.r.TLS.PeerCertificates[0].VerifyHostname(host) == nil
}

// checkMemberRecord validates a record's addresses and schema.
func checkMemberRecord(req apiv1.RecordMemberRequest) error {
	for _, a := range []struct{ field, addr string }{{"raftAddr", req.RaftAddr}, {"httpAddr", req.HTTPAddr}} {
		host, port, err := net.SplitHostPort(a.addr)
		if err != nil || host == "" || port == "" {
			return badRequest("%s %q: want host:port", a.field, a.addr)
		}
	}
	if req.Schema < MinMemberSchema || req.Schema > MaxMemberSchema {
		return badRequest("schema %d: want %d to %d", req.Schema, MinMemberSchema, MaxMemberSchema)
	}
	return nil
}
