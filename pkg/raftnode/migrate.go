package raftnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// Names the bolt-to-WAL migration uses under DataDir/raft.
const (
	// walMigratingDir is where the WAL is built; it becomes walDir in one
	// rename once complete and synced, so walDir never holds a partial log.
	walMigratingDir = "wal.migrating"
	// boltMigratedFile is what the bolt log is renamed to once the WAL is
	// in place; it is kept (not read again) for an operator to remove.
	boltMigratedFile = "raft.db.migrated"
)

// migrateChunk is how many entries one WAL append of the migration holds.
const migrateChunk = 1024

// stableKeys returns the keys hashicorp/raft keeps in the stable store:
// uint64 ones (terms) and byte ones (the candidate voted for).
func stableKeys() (uint64Keys, bytesKeys [][]byte) {
	return [][]byte{[]byte("CurrentTerm"), []byte("LastVoteTerm")}, [][]byte{[]byte("LastVoteCand")}
}

// Migration steps, in order, named for migrateHooks.
const (
	stepCopied      = "copied"       // wal.migrating holds every entry and key, synced
	stepWALInPlace  = "wal-in-place" // wal.migrating renamed to wal
	stepBoltRetired = "bolt-retired" // raft.db renamed to raft.db.migrated
)

// migrateHooks lets a test stop the migration after a step, as a crash
// there would.
type migrateHooks struct {
	// after, when set, is called after each step; an error stops the
	// migration there and is returned.
	after func(step string) error
}

func (h migrateHooks) step(name string) error {
	if h.after == nil {
		return nil
	}
	return h.after(name)
}

// migrateBoltToWAL moves a bolt raft log in dir to a WAL in dir/wal. It is
// idempotent and safe to interrupt at any point: until the synced WAL is
// renamed into place the bolt log is the only log (a partial
// wal.migrating is removed and the copy redone); after it, the WAL is the
// log and a bolt file still beside it is renamed away.
func migrateBoltToWAL(dir string, logger hclog.Logger, hooks migrateHooks) error {
	boltPath := filepath.Join(dir, boltLogFile)
	tmp := filepath.Join(dir, walMigratingDir)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove partial wal migration %s: %w", tmp, err)
	}
	haveBolt, err := exists(boltPath)
	if err != nil {
		return err
	}
	haveWAL, err := exists(filepath.Join(dir, walDir))
	if err != nil {
		return err
	}
	switch {
	case !haveBolt:
		return nil
	case haveWAL:
		return retireBolt(dir, hooks)
	}
	logger.Info("migrating the raft log from bolt to wal", "dir", dir)
	if err := copyBoltToWAL(boltPath, tmp, logger); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := hooks.step(stepCopied); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, walDir)); err != nil {
		return fmt.Errorf("move migrated wal into place: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := hooks.step(stepWALInPlace); err != nil {
		return err
	}
	if err := retireBolt(dir, hooks); err != nil {
		return err
	}
	logger.Info("migrated the raft log from bolt to wal", "dir", dir, "old_log", boltMigratedFile)
	return nil
}

// copyBoltToWAL copies every log entry and stable key of the bolt log at
// boltPath into a new WAL in walPath. Each WAL append is fsynced.
func copyBoltToWAL(boltPath, walPath string, logger hclog.Logger) (err error) {
	src, err := openBolt(boltPath, false)
	if err != nil {
		return fmt.Errorf("migrate raft log: %w", err)
	}
	defer src.Close()
	dst, err := openWAL(walPath, logger)
	if err != nil {
		return fmt.Errorf("migrate raft log: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("migrate raft log: close wal: %w", cerr)
		}
	}()
	first, err := src.FirstIndex()
	if err != nil {
		return fmt.Errorf("migrate raft log: read first index: %w", err)
	}
	last, err := src.LastIndex()
	if err != nil {
		return fmt.Errorf("migrate raft log: read last index: %w", err)
	}
	for lo := first; first > 0 && lo <= last; lo += migrateChunk {
		hi := min(lo+migrateChunk-1, last)
		logs := make([]*raft.Log, 0, hi-lo+1)
		for i := lo; i <= hi; i++ {
			l := new(raft.Log)
			if err := src.GetLog(i, l); err != nil {
				return fmt.Errorf("migrate raft log: read entry %d: %w", i, err)
			}
			logs = append(logs, l)
		}
		if err := dst.StoreLogs(logs); err != nil {
			return fmt.Errorf("migrate raft log: write entries %d-%d: %w", lo, hi, err)
		}
	}
	uint64Keys, bytesKeys := stableKeys()
	for _, k := range uint64Keys {
		v, err := src.GetUint64(k)
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("migrate raft log: read %s: %w", k, err)
		}
		if err := dst.SetUint64(k, v); err != nil {
			return fmt.Errorf("migrate raft log: write %s: %w", k, err)
		}
	}
	for _, k := range bytesKeys {
		v, err := src.Get(k)
		if errors.Is(err, raftboltdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("migrate raft log: read %s: %w", k, err)
		}
		if err := dst.Set(k, v); err != nil {
			return fmt.Errorf("migrate raft log: write %s: %w", k, err)
		}
	}
	return nil
}

// retireBolt renames the bolt log away once the WAL is in place.
func retireBolt(dir string, hooks migrateHooks) error {
	if err := os.Rename(filepath.Join(dir, boltLogFile), filepath.Join(dir, boltMigratedFile)); err != nil {
		return fmt.Errorf("retire migrated bolt log: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return hooks.step(stepBoltRetired)
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("stat %s: %w", path, err)
	}
}

// syncDir fsyncs a directory, so renames and new files in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
