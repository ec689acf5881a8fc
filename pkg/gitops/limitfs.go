package gitops

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/go-git/go-billy/v5"
)

// limitFS is a billy.Filesystem that fails writes once the bytes written
// through it (and every filesystem chrooted from it) exceed max.
type limitFS struct {
	billy.Filesystem
	written *atomic.Int64
	max     int64
}

func newLimitFS(fs billy.Filesystem, max int64) *limitFS {
	return &limitFS{Filesystem: fs, written: &atomic.Int64{}, max: max}
}

func (l *limitFS) wrap(f billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return &limitFile{File: f, fs: l}, nil
}

// Create creates a counted file.
func (l *limitFS) Create(name string) (billy.File, error) { return l.wrap(l.Filesystem.Create(name)) }

// OpenFile opens a counted file.
func (l *limitFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return l.wrap(l.Filesystem.OpenFile(name, flag, perm))
}

// TempFile creates a counted temporary file.
func (l *limitFS) TempFile(dir, prefix string) (billy.File, error) {
	return l.wrap(l.Filesystem.TempFile(dir, prefix))
}

// Chroot returns a filesystem under path that shares the count.
func (l *limitFS) Chroot(path string) (billy.Filesystem, error) {
	fs, err := l.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return &limitFS{Filesystem: fs, written: l.written, max: l.max}, nil
}

// limitFile counts what is written to it.
type limitFile struct {
	billy.File
	fs *limitFS
}

// Write writes p unless it would take the filesystem over its bound.
func (f *limitFile) Write(p []byte) (int, error) {
	if n := f.fs.written.Add(int64(len(p))); n > f.fs.max {
		return 0, fmt.Errorf("write %s: %w: more than %d bytes", f.Name(), ErrTooLarge, f.fs.max)
	}
	return f.File.Write(p)
}
