package etcdsnap

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

// keyBucket is etcd's bucket of revisions: each key is the 8-byte big-endian
// main revision, '_', the 8-byte sub revision (and 't' for a tombstone).
const keyBucket = "key"

// Verify opens data (an etcd database file) with bbolt, read-only from a
// temporary file in dir ("" is os.TempDir), and returns the newest revision
// it holds (0 for an etcd that never stored a key).
func Verify(data []byte, dir string) (int64, error) {
	f, err := os.CreateTemp(dir, "etcd-snapshot-*.db")
	if err != nil {
		return 0, fmt.Errorf("verify snapshot: %w", err)
	}
	path := f.Name()
	defer os.Remove(path)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return 0, fmt.Errorf("verify snapshot: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("verify snapshot: %w", err)
	}
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return 0, fmt.Errorf("verify snapshot: %w: open with bbolt: %w", ErrInvalid, err)
	}
	defer db.Close()
	var rev int64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(keyBucket))
		if b == nil {
			return fmt.Errorf("%w: no %q bucket", ErrInvalid, keyBucket)
		}
		k, _ := b.Cursor().Last()
		if len(k) >= 8 {
			rev = int64(binary.BigEndian.Uint64(k[:8]))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("verify snapshot: %w", err)
	}
	return rev, nil
}
