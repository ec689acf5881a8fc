// Package raftnode runs one controller replica's hashicorp/raft instance:
// the log and stable store (a raft-wal write-ahead log by default, or the
// bbolt file of raft-boltdb/v2; a bolt data dir is migrated to the WAL at
// start), the file snapshot store,
// the transport, and a thin FSM that hands every committed entry to the
// store's command processor (store.State.Apply).
//
// A Node stamps commands (time, id, schema) on the leader before
// replicating them, reports the leader to callers that wrote to a follower
// (ErrNotLeader), manages membership with a quorum-safety check on removal
// (ErrQuorumLoss) and a leadership hand-over before the leader's own
// removal, and takes user snapshots and restores them as a bounded
// stream. Raft's own logging is routed to the injected slog.Logger.
package raftnode
