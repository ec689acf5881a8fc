package etcdsnap

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// etcdDB returns a bbolt database shaped like etcd's: a "key" bucket whose
// newest key is revision rev (main revision, '_', sub revision), plus a
// secret value to look for.
func etcdDB(t *testing.T, rev int64, withKeys bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if !withKeys {
			_, err := tx.CreateBucket([]byte("meta"))
			return err
		}
		b, err := tx.CreateBucket([]byte(keyBucket))
		if err != nil {
			return err
		}
		for r := int64(1); r <= rev; r++ {
			k := make([]byte, 17)
			binary.BigEndian.PutUint64(k, uint64(r))
			k[8] = '_'
			if err := b.Put(k, []byte("value of a Kubernetes Secret: hunter2")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
