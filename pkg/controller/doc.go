// Package controller assembles one kcore-controller replica: it loads the
// replica's PKI files and encryption key, opens the raft node over a mutual
// TLS stream layer (peers must present role controller; inbound connections
// are capped and must finish their handshake and start an RPC within
// RaftLimits' deadlines), serves the API of
// pkg/server over HTTPS, records this replica as a Member when it leads,
// and joins an existing cluster through POST /v1/members.
package controller
