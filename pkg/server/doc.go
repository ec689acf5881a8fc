// Package server is the controller's HTTP API under /v1: one routing table
// that names the roles allowed on each route, identity from the verified
// client certificate, strict JSON decoding with a body limit, stable error
// bodies, leader forwarding, leader-confirmed or stale reads, blocking
// queries, an audit entry committed through raft for every mutating or
// refused call, join tokens, certificate issuing, membership, snapshots,
// /metrics and /v1/health.
//
// The server reaches raft and the store only through Backend, which
// pkg/controller implements over pkg/raftnode. Wire types live in pkg/apiv1.
package server
