package raftnode

import (
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// deleteChunk is how many log entries one bbolt transaction deletes when
// raft truncates the log after a snapshot.
const deleteChunk = 4096

// chunkedLogStore is the bbolt log store with truncation split into
// transactions of deleteChunk entries. bbolt has one writer at a time, so
// deleting the hundreds of thousands of entries a long stretch of writes
// leaves behind in one transaction held up every log write (and so every
// commit) until it was done; between chunks, log writes go on. Entries go
// oldest first, so a crash part way leaves a log that starts later, which
// the snapshot just taken covers.
type chunkedLogStore struct {
	*raftboltdb.BoltStore
}

// DeleteRange deletes the entries lo to hi, inclusive.
func (s chunkedLogStore) DeleteRange(lo, hi uint64) error {
	for lo <= hi {
		end := hi
		if hi-lo >= deleteChunk {
			end = lo + deleteChunk - 1
		}
		if err := s.BoltStore.DeleteRange(lo, end); err != nil {
			return err
		}
		if end == hi {
			return nil
		}
		lo = end + 1
	}
	return nil
}
