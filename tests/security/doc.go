// Package security holds the controller API's security tests: real HTTPS
// servers on 127.0.0.1:0 over in-process raft replicas (tests/harness),
// real certificates from pkg/pki, and checks that unauthenticated,
// foreign, unauthorized, oversized and malformed requests are refused,
// audited where the caller was known, and change nothing. It also holds the
// node agent's: hostile NodeStates applied by a real Applier over a
// temporary root (symlink swaps, the agent's own directory, gzip bombs).
package security
