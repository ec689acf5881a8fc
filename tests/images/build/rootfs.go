package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNotStatic is returned for a binary that needs a dynamic loader: the
// images hold no libc, so only static binaries run in them.
var ErrNotStatic = errors.New("binary is not static")

// maxApplets bounds the busybox applet list read from busybox --list-full.
const maxApplets = 1024

// caBundle is the host's CA bundle (Debian's ca-certificates), the file
// distroless images carry at the same path.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// passwd and group hold root, the distroless nonroot user (65532) and
// nobody (65534), as the upstream base images do.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// entry is one file, directory or symlink of a root filesystem.
type entry struct {
	Mode   int64
	Type   byte
	Data   []byte
	Link   string
	Xattrs map[string]string
}

// rootfs is an image's root filesystem, written as one tar layer with fixed
// owners and times so that the same inputs give the same digest.
type rootfs map[string]entry

func (r rootfs) dir(p string, mode int64) {
	for d := p; d != "/" && d != "."; d = path.Dir(d) {
		if _, ok := r[d]; !ok {
			r[d] = entry{Mode: 0o755, Type: tar.TypeDir}
		}
	}
	r[p] = entry{Mode: mode, Type: tar.TypeDir}
}

func (r rootfs) file(p string, mode int64, data []byte, xattrs map[string]string) {
	r.dir(path.Dir(p), 0o755)
	r[p] = entry{Mode: mode, Type: tar.TypeReg, Data: data, Xattrs: xattrs}
}

func (r rootfs) symlink(p, target string) {
	r.dir(path.Dir(p), 0o755)
	r[p] = entry{Mode: 0o777, Type: tar.TypeSymlink, Link: target}
}

// tar writes the layer: parents before children, every entry owned by root
// and dated at the Unix epoch.
func (r rootfs) tar() ([]byte, error) {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := r[n]
		h := &tar.Header{
			Name: strings.TrimPrefix(n, "/"), Mode: e.Mode, Typeflag: e.Type, Linkname: e.Link,
			Size: int64(len(e.Data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX,
		}
		if e.Type == tar.TypeDir {
			h.Name += "/"
		}
		for k, v := range e.Xattrs {
			if h.PAXRecords == nil {
				h.PAXRecords = map[string]string{}
			}
			h.PAXRecords["SCHILY.xattr."+k] = v
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write tar header %s: %w", n, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, fmt.Errorf("write tar entry %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}
	return buf.Bytes(), nil
}

// shellPath is where a recipe's Shell goes.
const shellPath = "/bin/sh"

// buildRootfs assembles one image's root filesystem from its static binary.
// An image on a Base gets only its binary and Dirs here: the Debian root
// filesystem under it has its own users and directories.
func buildRootfs(r recipe, bin string) (rootfs, error) {
	fs := rootfs{}
	if r.Base == "" {
		fs.file("/etc/passwd", 0o644, []byte(passwd), nil)
		fs.file("/etc/group", 0o644, []byte(group), nil)
		fs.dir("/tmp", 0o1777)
		fs.dir("/root", 0o700)
		fs.dir("/home/nonroot", 0o755)
	}
	for _, d := range r.Dirs {
		fs.dir(d, 0o755)
	}
	if r.Path == "" {
		return fs, nil
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read binary: %w", err)
	}
	if err := checkStatic(bin); err != nil {
		return nil, err
	}
	fs.file(r.Path, 0o755, data, r.Xattrs)
	if r.CACerts {
		ca, err := os.ReadFile(caBundle)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle (Debian's ca-certificates): %w", err)
		}
		fs.file(caBundle, 0o644, ca, nil)
	}
	if r.Applets {
		applets, err := busyboxApplets(bin)
		if err != nil {
			return nil, err
		}
		for _, a := range applets {
			if a != r.Path && (r.Shell == "" || a != shellPath) {
				fs.symlink(a, r.Path)
			}
		}
	}
	for dst, src := range r.Files {
		if err := fs.copyIn(dst, filepath.Join(filepath.Dir(bin), src)); err != nil {
			return nil, err
		}
	}
	if r.Shell != "" {
		sh := filepath.Join(filepath.Dir(bin), r.Shell)
		if err := checkStatic(sh); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(sh)
		if err != nil {
			return nil, fmt.Errorf("read shell: %w", err)
		}
		fs.file(shellPath, 0o755, data, nil)
	}
	return fs, nil
}

// maxCopiedFiles bounds the entries one recipe's Files may add.
const maxCopiedFiles = 4096

// copyIn adds the file, directory tree or symlink at src as dst, keeping
// modes (owners and times are the layer's fixed ones).
func (r rootfs) copyIn(dst, src string) error {
	n := 0
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
		if n++; n > maxCopiedFiles {
			return fmt.Errorf("copy %s: more than %d entries", src, maxCopiedFiles)
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		at := path.Join(dst, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		mode := int64(info.Mode().Perm())
		switch {
		case d.IsDir():
			r.dir(at, mode)
		case d.Type()&os.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("copy %s: %w", p, err)
			}
			r.symlink(at, t)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("copy %s: %w", p, err)
			}
			r.file(at, mode, data, nil)
		default:
			return fmt.Errorf("copy %s: not a file, directory or symlink", p)
		}
		return nil
	})
}

// busyboxApplets lists where busybox installs each applet it was built with.
func busyboxApplets(bin string) ([]string, error) {
	out, err := exec.Command(bin, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("list busybox applets: %w", err)
	}
	var applets []string
	for _, l := range strings.Fields(string(out)) {
		if strings.Contains(l, "..") {
			return nil, fmt.Errorf("list busybox applets: odd path %q", l)
		}
		applets = append(applets, "/"+strings.TrimPrefix(l, "/"))
	}
	if len(applets) == 0 || len(applets) > maxApplets {
		return nil, fmt.Errorf("list busybox applets: %d applets, want 1 to %d", len(applets), maxApplets)
	}
	return applets, nil
}

// checkStatic refuses an ELF binary with a program interpreter or one built
// for another machine than amd64.
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("open binary %s: %w", bin, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("check binary %s: machine %s, want x86-64", bin, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("check binary %s: %w", bin, ErrNotStatic)
		}
	}
	return nil
}
