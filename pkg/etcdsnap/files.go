package etcdsnap

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// DirName is the directory under a controller replica's data directory
// that holds its etcd snapshot files.
const DirName = "etcd-snapshots"

// fileSuffix ends every snapshot file's name.
const fileSuffix = ".snap"

// ErrNotLocal means the snapshot is kept as a file on other replicas than
// this one.
var ErrNotLocal = errors.New("etcd snapshot file not on this replica")

// Files keeps etcd snapshots as files in one replica's directory: each file
// is the JSON of a store.Sealed envelope of the gzipped snapshot, sealed for
// (EtcdSnapshot, name) like the in-raft content, so a file cannot be passed
// off as another snapshot. Files are written atomically (temporary file,
// fsync, rename, fsync of the directory).
type Files struct {
	// Dir is the directory; a cluster's snapshots live in Dir/<cluster>/.
	Dir string
	// Sealer seals and opens the files (the controller keyring).
	Sealer store.Sealer
}

// Path is where the file of snapshot name (<cluster>/<stamp>-<reason>) is.
// It refuses names that would leave Dir.
func (f *Files) Path(name string) (string, error) {
	cluster, rest, ok := strings.Cut(name, "/")
	bad := func(s string) bool {
		return s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00")
	}
	if !ok || bad(cluster) || bad(rest) {
		return "", fmt.Errorf("locate etcd snapshot %q: %w: not <cluster>/<snapshot>", name, ErrNotFound)
	}
	return filepath.Join(f.Dir, cluster, rest+fileSuffix), nil
}

// Write seals gz (a gzipped snapshot) as the file of name and returns the
// file's size.
func (f *Files) Write(name string, gz []byte) (int64, error) {
	sealed, err := f.Sealer.Seal(apiv1.KindEtcdSnapshot, name, gz)
	if err != nil {
		return 0, fmt.Errorf("seal etcd snapshot %s: %w", name, err)
	}
	data, err := json.Marshal(sealed)
	if err != nil {
		return 0, fmt.Errorf("encode etcd snapshot %s: %w", name, err)
	}
	if err := f.WriteSealed(name, data); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// WriteSealed writes data, a sealed file as ReadSealed returns it (from
// another replica), as the file of name, after checking it opens.
func (f *Files) WriteSealed(name string, data []byte) error {
	if _, err := f.open(name, data); err != nil {
		return err
	}
	path, err := f.Path(name)
	if err != nil {
		return err
	}
	if err := writeAtomic(path, data); err != nil {
		return fmt.Errorf("write etcd snapshot %s: %w", name, err)
	}
	return nil
}

// ReadSealed returns the file of name as stored (sealed); ErrNotLocal when
// this replica has none.
func (f *Files) ReadSealed(name string) ([]byte, error) {
	path, err := f.Path(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read etcd snapshot %s: %w", name, ErrNotLocal)
	}
	if err != nil {
		return nil, fmt.Errorf("read etcd snapshot %s: %w", name, err)
	}
	return data, nil
}

// Read returns the gzipped snapshot of the file of name, unsealed.
func (f *Files) Read(name string) ([]byte, error) {
	data, err := f.ReadSealed(name)
	if err != nil {
		return nil, err
	}
	return f.open(name, data)
}

func (f *Files) open(name string, data []byte) ([]byte, error) {
	var sealed store.Sealed
	if err := json.Unmarshal(data, &sealed); err != nil {
		return nil, fmt.Errorf("open etcd snapshot %s: %w: %w", name, ErrInvalid, err)
	}
	gz, err := f.Sealer.Open(apiv1.KindEtcdSnapshot, name, sealed)
	if err != nil {
		return nil, fmt.Errorf("open etcd snapshot %s: %w: %w", name, ErrInvalid, err)
	}
	return gz, nil
}

// Remove deletes the file of name; a missing file is not an error.
func (f *Files) Remove(name string) error {
	path, err := f.Path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove etcd snapshot %s: %w", name, err)
	}
	return nil
}

// Names lists the snapshots this replica holds a file of.
func (f *Files) Names() ([]string, error) {
	clusters, err := os.ReadDir(f.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list etcd snapshots: %w", err)
	}
	var out []string
	for _, c := range clusters {
		if !c.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(f.Dir, c.Name()))
		if err != nil {
			return nil, fmt.Errorf("list etcd snapshots: %w", err)
		}
		for _, e := range files {
			if base, ok := strings.CutSuffix(e.Name(), fileSuffix); ok && e.Type().IsRegular() {
				out = append(out, c.Name()+"/"+base)
			}
		}
	}
	return out, nil
}

// writeAtomic writes data to path through a temporary file in the same
// directory, synced, renamed over path, and the directory synced, so a
// crash leaves the old file or the new one, never part of one.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	done = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
