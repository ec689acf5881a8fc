package raftnode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/types"
)

// Log store kinds (Config.LogStore).
const (
	// LogStoreWAL keeps the raft log in append-only segment files
	// (hashicorp/raft-wal): one write and one fsync per batch of entries.
	// A data dir that holds a bolt log is migrated to it at start.
	LogStoreWAL = "wal"
	// LogStoreBolt keeps the raft log in one bbolt file (raft-boltdb/v2),
	// as releases before the WAL did: every batch is a bbolt commit.
	LogStoreBolt = "bolt"
	// DefaultLogStore is the kind an empty Config.LogStore selects.
	DefaultLogStore = LogStoreWAL
)

// File names under DataDir/raft.
const (
	boltLogFile = "raft.db"
	walDir      = "wal"
)

// ErrSealedWithoutIndex reports a data dir whose WAL holds a segment that
// raft-wal v0.4.0 sealed without its index block (it did so when a log
// suffix was cleared): no entry of it can be read, so the replica cannot
// start from this data dir. Its data is on the other replicas: remove it
// (kctl controller remove ID) and start it again with an empty data dir and
// --join.
var ErrSealedWithoutIndex = errors.New("raft log segment sealed without its index (raft-wal v0.4.0): remove this replica and start it again with an empty data dir and --join")

// ErrLogStoreMismatch reports a data dir whose raft log is of a kind the
// configured log store cannot read (a WAL log with LogStoreBolt).
var ErrLogStoreMismatch = errors.New("raft log store does not match the data dir")

// logStore is what raft needs from the log and stable store, and Close.
type logStore interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// openLogStore opens the raft log and stable store of the given kind under
// dir (DataDir/raft), migrating a bolt log to the WAL first when the kind
// is LogStoreWAL and the dir holds one.
func openLogStore(dir, kind string, noSync bool, logger hclog.Logger) (logStore, raft.LogStore, error) {
	switch kind {
	case "", LogStoreWAL:
		if err := migrateBoltToWAL(dir, logger, migrateHooks{}); err != nil {
			return nil, nil, err
		}
		w, err := openWAL(filepath.Join(dir, walDir), logger)
		if err != nil {
			return nil, nil, err
		}
		return w, w, nil
	case LogStoreBolt:
		if _, err := os.Stat(filepath.Join(dir, walDir)); err == nil {
			return nil, nil, fmt.Errorf("open bolt log in %s: %w: it holds a %s log", dir, ErrLogStoreMismatch, LogStoreWAL)
		}
		b, err := openBolt(filepath.Join(dir, boltLogFile), noSync)
		if err != nil {
			return nil, nil, err
		}
		return b, chunkedLogStore{b}, nil
	default:
		return nil, nil, fmt.Errorf("open raft log: unknown log store %q (want %s or %s)", kind, LogStoreWAL, LogStoreBolt)
	}
}

// walStore is the WAL with a Close that also closes its metadata store:
// WAL.Close leaves that bbolt file open and locked, so the same process
// could not open the WAL again (a replica restarted in place would wait
// for the lock forever).
type walStore struct {
	*wal.WAL
	meta *metadb.BoltMetaDB
}

// Close closes the WAL's segments and its metadata store.
func (w walStore) Close() error {
	return errors.Join(w.WAL.Close(), w.meta.Close())
}

// FirstLogIndex returns the first index of the raft log in a stopped
// replica's data dir, of whichever kind the dir holds (0 for an empty or
// missing log), for tests and diagnostics. It does not migrate or create
// anything.
func FirstLogIndex(dataDir string) (uint64, error) {
	dir := filepath.Join(dataDir, "raft")
	var s logStore
	if ok, err := exists(filepath.Join(dir, walDir)); err != nil {
		return 0, err
	} else if ok {
		w, err := openWAL(filepath.Join(dir, walDir), hclog.NewNullLogger())
		if err != nil {
			return 0, err
		}
		s = w
	} else if ok, err := exists(filepath.Join(dir, boltLogFile)); err != nil || !ok {
		return 0, err
	} else {
		b, err := openBolt(filepath.Join(dir, boltLogFile), false)
		if err != nil {
			return 0, err
		}
		s = b
	}
	first, err := s.FirstIndex()
	if cerr := s.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close raft log: %w", cerr)
	}
	if err != nil {
		return 0, fmt.Errorf("read first log index in %s: %w", dir, err)
	}
	return first, nil
}

// openWAL opens (or creates) the WAL in dir.
func openWAL(dir string, logger hclog.Logger) (walStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return walStore{}, fmt.Errorf("create wal dir %s: %w", dir, err)
	}
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithLogger(logger.Named("wal")), wal.WithMetaStore(meta))
	if err != nil {
		return walStore{}, errors.Join(fmt.Errorf("open wal %s: %w", dir, err), meta.Close())
	}
	ws := walStore{WAL: w, meta: meta}
	st, err := meta.Load(dir)
	if err == nil {
		err = checkSealed(st)
	}
	if err != nil {
		return walStore{}, errors.Join(fmt.Errorf("open wal %s: %w", dir, err), ws.Close())
	}
	return ws, nil
}

// checkSealed refuses a WAL with a sealed segment that has no index block
// (ErrSealedWithoutIndex): raft would panic reading it.
func checkSealed(st types.PersistentState) error {
	for _, seg := range st.Segments {
		if !seg.SealTime.IsZero() && seg.IndexStart == 0 {
			return fmt.Errorf("segment %d (entries from %d): %w", seg.ID, seg.BaseIndex, ErrSealedWithoutIndex)
		}
	}
	return nil
}

// openBolt opens (or creates) the bbolt log file at path.
func openBolt(path string, noSync bool) (*raftboltdb.BoltStore, error) {
	b, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: boltOptions(), NoSync: noSync})
	if err != nil {
		return nil, fmt.Errorf("open bolt log %s: %w", path, err)
	}
	return b, nil
}

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

// LogEntry returns the entry at index as this replica's raft log holds it,
// its bytes as written, for tests and diagnostics (e.g. which wire form an
// entry is in). It fails with raft.ErrLogNotFound when the log no longer
// or not yet holds the index.
func (n *Node) LogEntry(index uint64) (*raft.Log, error) {
	var l raft.Log
	if err := n.cache.GetLog(index, &l); err != nil {
		return nil, fmt.Errorf("read log entry %d: %w", index, err)
	}
	return &l, nil
}
