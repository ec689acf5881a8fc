package confined

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrEscape refuses a name that is not local to the directory or that
// crosses a symlink.
var ErrEscape = errors.New("path escapes its confined directory")

// MaxRetries bounds how often a lookup the kernel asks to retry (EAGAIN:
// a rename elsewhere raced with it) is tried again before it fails.
const MaxRetries = 16

// TempInfix is in the name of every temporary file WriteFile makes:
// "." + name + TempInfix + random text, so a caller can sweep what a crash
// left behind.
const TempInfix = ".tmp-"

// resolveFlags keep every lookup beneath the handle and off symlinks.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// Dir is an open directory every operation is confined to. It is safe for
// concurrent use; Close releases it.
type Dir struct {
	f *os.File
}

// Open opens the directory at path as a confinement handle. The path itself
// is the caller's trusted configuration (symlinks in it are followed once,
// here); names passed to the handle's methods never follow one.
func Open(path string) (*Dir, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open confined directory: %w", err)
	}
	return &Dir{f: f}, nil
}

// Name is the path the handle was opened with (for messages and for
// commands that take a path).
func (d *Dir) Name() string { return d.f.Name() }

// Close releases the handle.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// ProcPath is a path naming the handle's directory itself
// (/proc/self/fd/N), for a library that takes a path, not a handle
// (bbolt): a name looked up beneath it starts at the open directory, not
// at whatever the directory's path names by then. It is valid while the
// handle is open; names beneath it are looked up the ordinary way.
func (d *Dir) ProcPath() string { return fmt.Sprintf("/proc/self/fd/%d", d.fd()) }

// check refuses a name that is empty, absolute, holds a NUL or any ".."
// element; the kernel enforces the same, this only gives a clearer error.
func check(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%q: %w: not a relative name", name, ErrEscape)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return fmt.Errorf("%q: %w: a parent (..) element", name, ErrEscape)
		}
	}
	return nil
}

// openat opens name beneath dirfd without crossing a symlink.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: resolveFlags}
	fd, err := retried(func() (int, error) { return unix.Openat2(dirfd, name, how) })
	switch {
	case err == nil:
		return fd, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, fmt.Errorf("%q: %w: %w", name, ErrEscape, err)
	case errors.Is(err, unix.ENOSYS):
		return -1, fmt.Errorf("%q: openat2 is not supported by this kernel (Linux 5.6 or later is needed): %w", name, err)
	}
	return -1, fmt.Errorf("%q: %w", name, err)
}

// retried calls open until it does not fail with EAGAIN or EINTR, at most
// MaxRetries times.
func retried(open func() (int, error)) (int, error) {
	var err error
	for range MaxRetries {
		var fd int
		if fd, err = open(); !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
	return -1, fmt.Errorf("lookup raced %d times: %w", MaxRetries, err)
}

// elements splits a checked name into its path elements, dropping "." and
// empty ones.
func elements(name string) []string {
	var out []string
	for _, el := range strings.Split(name, "/") {
		if el != "" && el != "." {
			out = append(out, el)
		}
	}
	return out
}

// walk opens the directory name beneath d one element at a time, creating
// missing ones with perm when create is set. The caller closes the result.
func (d *Dir) walk(name string, create bool, perm os.FileMode) (int, error) {
	fd, err := openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, err
	}
	for _, el := range elements(name) {
		if create {
			if err := unix.Mkdirat(fd, el, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, fmt.Errorf("create %q: %w", name, err)
			}
		}
		next, err := openat(fd, el, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("open %q: %w", name, err)
		}
		fd = next
	}
	return fd, nil
}

// MkdirAll creates the directory name and its missing parents with perm
// (before the umask).
func (d *Dir) MkdirAll(name string, perm os.FileMode) error {
	if err := check(name); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	fd, err := d.walk(name, true, perm)
	if err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	return unix.Close(fd)
}

// OpenFile opens the regular file name for reading; anything else (a
// directory, a device, a FIFO) is refused without blocking.
func (d *Dir) OpenFile(name string) (*os.File, error) {
	if err := check(name); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	fd, err := openat(d.fd(), name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	f := os.NewFile(uintptr(fd), path.Join(d.Name(), name))
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %q: not a regular file", name)
	}
	return f, nil
}

// MaxLinkBytes bounds the symlink target Readlink returns.
const MaxLinkBytes = 1024

// Readlink returns the target of the symlink name, which must be a single
// element directly in the directory (no "/"), so no symlink is crossed on
// the way to it; the target is returned as stored, never followed.
func (d *Dir) Readlink(name string) (string, error) {
	if err := check(name); err != nil {
		return "", fmt.Errorf("readlink: %w", err)
	}
	if strings.Contains(name, "/") || name == "." {
		return "", fmt.Errorf("readlink %q: %w: not a single name", name, ErrEscape)
	}
	buf := make([]byte, MaxLinkBytes+1)
	n, err := unix.Readlinkat(d.fd(), name, buf)
	if err != nil {
		return "", fmt.Errorf("readlink %q: %w", name, err)
	}
	if n > MaxLinkBytes {
		return "", fmt.Errorf("readlink %q: target longer than %d bytes", name, MaxLinkBytes)
	}
	return string(buf[:n]), nil
}

// ReadFile reads the regular file name, refusing one larger than limit bytes.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, error) {
	f, err := d.OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %q: larger than %d bytes", name, limit)
	}
	return data, nil
}

// WriteFile replaces the file name with what r yields, atomically: it
// writes a temporary file in the (opened) parent directory, sets mode on
// it, syncs it, renames it over name and syncs the directory. Missing
// parents are created 0755. It returns the bytes written.
func (d *Dir) WriteFile(name string, r io.Reader, mode os.FileMode) (int64, error) {
	if err := check(name); err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	parent, base := path.Split(path.Clean(name))
	if base == "." || base == "" {
		return 0, fmt.Errorf("write %q: %w: not a file name", name, ErrEscape)
	}
	dirfd, err := d.walk(parent, true, 0o755)
	if err != nil {
		return 0, fmt.Errorf("write %q: %w", name, err)
	}
	defer unix.Close(dirfd)
	tmp := "." + base + TempInfix + rand.Text()
	fd, err := openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("write %q: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	n, err := writeTemp(f, r, mode)
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, base)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return n, fmt.Errorf("write %q: %w", name, err)
	}
	if err := unix.Fsync(dirfd); err != nil {
		return n, fmt.Errorf("write %q: sync directory: %w", name, err)
	}
	return n, nil
}

// writeTemp fills, chmods, syncs and closes the temporary file f.
func writeTemp(f *os.File, r io.Reader, mode os.FileMode) (int64, error) {
	defer f.Close()
	n, err := io.Copy(f, r)
	if err != nil {
		return n, err
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		return n, err
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	return n, f.Close()
}

// Remove deletes the file (or empty directory) name; a missing one, or a
// missing parent, is not an error. A symlink at name itself is removed,
// never followed.
func (d *Dir) Remove(name string) error {
	if err := check(name); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	parent, base := path.Split(path.Clean(name))
	if base == "." || base == "" {
		return fmt.Errorf("remove %q: %w: not a file name", name, ErrEscape)
	}
	dirfd, err := d.walk(parent, false, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove %q: %w", name, err)
	}
	defer unix.Close(dirfd)
	err = unix.Unlinkat(dirfd, base, 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %q: %w", name, err)
	}
	return nil
}

// Sub opens the directory name beneath d as a handle of its own, creating
// it and its missing parents with perm when create is set.
func (d *Dir) Sub(name string, create bool, perm os.FileMode) (*Dir, error) {
	if err := check(name); err != nil {
		return nil, fmt.Errorf("open directory: %w", err)
	}
	fd, err := d.walk(name, create, perm)
	if err != nil {
		return nil, fmt.Errorf("open directory: %w", err)
	}
	return &Dir{f: os.NewFile(uintptr(fd), path.Join(d.Name(), name))}, nil
}

// Chmod sets the mode of the handle's own directory (through its open
// descriptor, so no name is looked up).
func (d *Dir) Chmod(mode os.FileMode) error {
	if err := d.f.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", d.Name(), err)
	}
	return nil
}

// CreateTemp creates a new file, mode 0600, named prefix and random text in
// the handle's directory; remove deletes it by that name.
func (d *Dir) CreateTemp(prefix string) (f *os.File, remove func(), err error) {
	name := prefix + rand.Text()
	if err := check(name); err != nil || strings.Contains(name, "/") {
		return nil, nil, fmt.Errorf("create temporary file: %w", ErrEscape)
	}
	fd, err := openat(d.fd(), name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("create temporary file: %w", err)
	}
	return os.NewFile(uintptr(fd), path.Join(d.Name(), name)), func() { unix.Unlinkat(d.fd(), name, 0) }, nil
}

// OpenAppend opens the file name for appending, creating it with mode; a
// name that is not a regular file is refused.
func (d *Dir) OpenAppend(name string, mode os.FileMode) (*os.File, error) {
	if err := check(name); err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	fd, err := openat(d.fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NONBLOCK, uint32(mode.Perm()))
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	f := os.NewFile(uintptr(fd), path.Join(d.Name(), name))
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("open %q: not a regular file", name)
	}
	return f, nil
}

// ReadDir lists the directory name ("." for the handle's own).
func (d *Dir) ReadDir(name string) ([]os.DirEntry, error) {
	sub, err := d.Sub(name, false, 0)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	entries, err := sub.f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("read directory %q: %w", name, err)
	}
	return entries, nil
}
