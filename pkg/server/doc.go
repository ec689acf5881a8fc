// Package server is the controller's HTTP API under /v1: one routing table
// that names the roles allowed on each route, identity from the verified
// client certificate, strict JSON decoding with a body limit, stable error
// bodies, leader forwarding, leader-confirmed or stale reads, blocking
// queries, an audit entry committed through raft for every mutating or
// refused call of a caller with a certificate, join tokens bound to one
// node id, certificate issuing and renewal, revocation (checked on every TLS
// handshake through ServerTLS and again on every request), membership,
// snapshots, /metrics and /v1/health, and the connection caps and read
// deadlines of the API's listener and http.Server (Limits). RouteTable
// exports the routing table, from which the role × route table of
// docs/security.md is generated.
//
// Requests without a certificate never reach raft unless they succeed (a
// join): each replica rate-limits them per source (ratelimit.go), counts
// the failed ones by reason in metrics and commits one summary of them
// per interval through the leader (anonymous.go, summary.go). The audit
// log's retention is stored by the leader and applied by the store
// (retention.go).
//
// POST /v1/plan and /v1/apply read a planapply.View at one index and call
// planapply.Plan and planapply.Commit, which hold the plan and apply logic.
// The server reaches raft and the store only through Backend, which
// pkg/controller implements over pkg/raftnode. Wire types live in pkg/apiv1.
package server
