package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrPathNotAllowed refuses a host path outside the root or the allow-list.
var ErrPathNotAllowed = errors.New("path not allowed")

// AllowedPrefixes are the host directories the agent may write under.
func AllowedPrefixes() []string {
	return []string{
		"/etc/kubernetes",
		"/etc/keepalived",
		"/etc/nftables.d",
		"/etc/cni/net.d",
		"/etc/kcore",
		"/etc/systemd/system",
		"/var/lib/kcore",
		"/var/lib/etcd",
		"/var/lib/etcd-restore",
		"/var/lib/kubelet",
		"/var/lib/kube-proxy",
		"/var/log/kcore",
		"/mnt/kcore",
		"/run/kcore",
	}
}

// allowed reports whether the clean absolute path p is inside an allowed prefix.
func allowed(p string) bool {
	for _, pre := range AllowedPrefixes() {
		if p == pre || strings.HasPrefix(p, pre+"/") {
			return true
		}
	}
	return false
}

// Resolve maps the absolute host path hostPath to where it lives under
// root. It refuses (ErrPathNotAllowed) relative paths, any ".." element,
// paths outside AllowedPrefixes, and paths whose existing part resolves
// through symlinks to somewhere outside root or outside the allow-list.
func Resolve(root, hostPath string) (string, error) {
	if !filepath.IsAbs(hostPath) || strings.ContainsRune(hostPath, 0) {
		return "", fmt.Errorf("resolve %q: %w: not an absolute path", hostPath, ErrPathNotAllowed)
	}
	for _, el := range strings.Split(hostPath, "/") {
		if el == ".." {
			return "", fmt.Errorf("resolve %q: %w: a parent (..) element", hostPath, ErrPathNotAllowed)
		}
	}
	clean := filepath.Clean(hostPath)
	if !allowed(clean) {
		return "", fmt.Errorf("resolve %q: %w: outside %s", hostPath, ErrPathNotAllowed, strings.Join(AllowedPrefixes(), ", "))
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", hostPath, err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("resolve %q: root: %w", hostPath, err)
	}
	full := filepath.Join(absRoot, clean)
	real, err := realPath(full)
	if err != nil {
		return "", fmt.Errorf("resolve %q: %w", hostPath, err)
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("resolve %q: %w: a symlink leads outside the root", hostPath, ErrPathNotAllowed)
	}
	if !allowed(filepath.Join("/", rel)) {
		return "", fmt.Errorf("resolve %q: %w: a symlink leads to /%s", hostPath, ErrPathNotAllowed, rel)
	}
	return full, nil
}

// realPath resolves symlinks in the longest existing prefix of p and appends
// the rest (which does not exist, so holds no symlink).
func realPath(p string) (string, error) {
	var rest []string
	cur := p
	for {
		if _, err := os.Lstat(cur); err == nil {
			real, err := filepath.EvalSymlinks(cur)
			if err != nil {
				return "", err
			}
			return filepath.Join(append([]string{real}, rest...)...), nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
