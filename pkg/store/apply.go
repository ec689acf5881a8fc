package store

import (
	"fmt"
)

// Entry is one committed command and the raft index it was committed at,
// for ApplyBatch.
type Entry struct {
	// Index is the command's raft index.
	Index uint64
	// Cmd is the command.
	Cmd Command
}

// Apply processes the command committed at index and returns its result. It
// is deterministic: the same commands at the same indexes give the same
// state on every replica. A failed command changes nothing. A command with a
// schema newer than the state reads (version.Schema, see LimitReads) is refused with ErrSchemaTooNew, and an
// unknown non-ignorable type with ErrUnknownCommand; both are logged at
// error level with the index, because they mean this replica is too old for
// its log.
func (s *State) Apply(index uint64, cmd Command) Result {
	return s.ApplyBatch([]Entry{{Index: index, Cmd: cmd}})[0]
}

// ApplyBatch applies entries (in ascending index order) as Apply would
// apply them one after the other, and returns their results in order. The
// entries share one transaction: nodes of the object tree that several of
// them change are copied once, not once per entry, and readers and
// watchers see the state after the last entry. A failed entry still
// changes nothing.
func (s *State) ApplyBatch(entries []Entry) []Result {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	out := make([]Result, len(entries))
	if len(entries) == 0 {
		return out
	}
	tx := s.begin()
	for i, e := range entries {
		tx.index, tx.time = e.Index, e.Cmd.Time
		out[i] = s.applyOnce(tx, e)
	}
	s.commit(tx, entries[len(entries)-1].Index)
	return out
}

// applyOne applies one command inside tx. On error tx is as it was before.
func (s *State) applyOne(tx *txn, index uint64, cmd Command) error {
	if reads := s.readSchema(); cmd.Schema > reads {
		s.log.Error("refusing log entry written by a newer schema; upgrade this replica",
			"index", index, "type", cmd.Type, "schema", cmd.Schema, "reads", reads)
		return fmt.Errorf("apply %s at %d: schema %d, this build reads %d: %w",
			cmd.Type, index, cmd.Schema, reads, ErrSchemaTooNew)
	}
	switch cmd.Type {
	case TypePut:
		p, err := payloadOf[Put](cmd)
		if err != nil {
			return err
		}
		return tx.put(*p)
	case TypeDelete:
		d, err := payloadOf[Delete](cmd)
		if err != nil {
			return err
		}
		return tx.delete(*d)
	case TypeBatch:
		b, err := payloadOf[Batch](cmd)
		if err != nil {
			return err
		}
		return tx.batch(*b)
	case TypeAppendAudit:
		a, err := payloadOf[AppendAudit](cmd)
		if err != nil {
			return err
		}
		return tx.appendAudit(*a)
	}
	if cmd.Ignorable {
		s.log.Warn("skipping unknown ignorable log entry", "index", index, "type", cmd.Type, "schema", cmd.Schema)
		return nil
	}
	s.log.Error("refusing unknown log entry; upgrade this replica", "index", index, "type", cmd.Type, "schema", cmd.Schema)
	return fmt.Errorf("apply %q at %d: %w", cmd.Type, index, ErrUnknownCommand)
}
