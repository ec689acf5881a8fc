// Package store is the controller's replicated state machine: every stored
// object keyed by (kind, name) with the raft index that created and last
// modified it, the typed and versioned commands that change it, blocking
// queries over it, and deterministic snapshots of it.
//
// Apply is pure: it reads no clock, draws no randomness and does no I/O. The
// leader stamps time and ids into a Command before it is replicated, so every
// replica that applies the same log reaches byte-identical state. Secret
// objects reach the store already sealed (see Sealed); the store never sees
// plaintext.
//
// A command may carry a caller's request id (Command.RequestID). The state
// remembers recent ids with their results (bounded by DedupRetain and
// DedupMaxAge of leader time, kept in snapshots), and a command that
// repeats a remembered id gets the first result without being applied
// again.
//
// State.Apply is the command processor and State.ApplyBatch applies a run of
// committed commands in one transaction with the same results; pkg/raftnode
// wraps them in a thin raft.BatchingFSM, and a tool can replay a log by
// calling Apply directly.
package store
