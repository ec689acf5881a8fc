// Package agents holds the agent integration test: a real controller
// (TLS API, raft, orchestrator) and real node agents (apply engine,
// supervisor runtime, temp roots) bring up the lab cluster's NodeStates. The
// Kubernetes workload binaries are stand-ins that sleep until signalled (or
// exit at once for tasks); the lab runs the real ones.
package agents
