// Copyright (c) HashiCorp, Inc.
// SPDX-License-Identifier: MPL-2.0

package raft

import "sync"

// unsyncedLogs holds the batch the leader is writing to its log store, so
// the replicators can send it to the followers while the leader's own
// write (and its fsync) runs: the leader writes to its disk in parallel
// with replicating to the followers (Raft thesis, section 10.2.1). The
// leader counts itself towards a commit only once its write has returned,
// so an entry is committed only when a majority holds it durably, with or
// without the leader.
//
// Only the leader loop sets and clears it, one batch at a time; the
// replicators read it. An entry is in the batch, or in the log store, or
// both, from the moment its index is published (setLastLog) on.
type unsyncedLogs struct {
	mu   sync.RWMutex
	logs []*Log // consecutive indexes, logs[0].Index first; nil when idle
}

// set publishes the batch about to be written.
func (u *unsyncedLogs) set(logs []*Log) {
	u.mu.Lock()
	u.logs = logs
	u.mu.Unlock()
}

// clear forgets the batch once the log store holds it (or failed to).
func (u *unsyncedLogs) clear() {
	u.mu.Lock()
	u.logs = nil
	u.mu.Unlock()
}

// get copies the entry at index into out when the batch holds it.
func (u *unsyncedLogs) get(index uint64, out *Log) bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if len(u.logs) == 0 || index < u.logs[0].Index {
		return false
	}
	off := index - u.logs[0].Index
	if off >= uint64(len(u.logs)) {
		return false
	}
	*out = *u.logs[off]
	return true
}

// getLog reads the entry at index for replication: from the batch being
// written when it holds it, else from the log store.
func (r *Raft) getLog(index uint64, out *Log) error {
	if r.unsynced.get(index, out) {
		return nil
	}
	return r.logs.GetLog(index, out)
}
