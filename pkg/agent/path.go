package agent

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"kcore.dev/kcore/pkg/confined"
)

// ErrPathNotAllowed refuses a host path outside the root or the allow-list.
var ErrPathNotAllowed = errors.New("path not allowed")

// ErrAgentDir refuses a rendered host path inside AgentDir; it comes
// wrapped together with ErrPathNotAllowed.
var ErrAgentDir = errors.New("path in the agent's own directory")

// AgentDir is the agent's own directory: its state, node credentials,
// volume ownership records and runtime state. Nothing rendered may name a
// path in it; the agent writes it through its own handle (OpenAgentDir).
const AgentDir = "/var/lib/kcore"

// AllowedPrefixes are the host directories rendered files, mount paths and
// the runtime directory may be in.
func AllowedPrefixes() []string {
	return []string{
		"/etc/kubernetes",
		"/etc/keepalived",
		"/etc/nftables.d",
		"/etc/cni/net.d",
		"/etc/containerd",
		"/etc/kcore",
		"/etc/systemd/system",
		"/var/lib/etcd",
		"/var/lib/etcd-restore",
		"/var/lib/kubelet",
		"/var/lib/kube-proxy",
		"/var/log/kcore",
		"/mnt/kcore",
		"/run/kcore",
	}
}

// within reports whether the clean absolute path p is dir or beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// allowed reports whether the clean absolute path p is inside an allowed prefix.
func allowed(p string) bool {
	for _, pre := range AllowedPrefixes() {
		if within(p, pre) {
			return true
		}
	}
	return false
}

// Resolve checks the absolute host path hostPath and returns its name
// relative to the root, for the root's confined handle. It refuses
// (ErrPathNotAllowed) relative paths, any ".." element, a NUL, paths in
// AgentDir (also ErrAgentDir) and paths outside AllowedPrefixes. It looks at
// no file: symlinks are refused by the handle, at every component and at
// the moment of each operation.
func Resolve(hostPath string) (string, error) {
	if !path.IsAbs(hostPath) || strings.ContainsRune(hostPath, 0) {
		return "", fmt.Errorf("resolve %q: %w: not an absolute path", hostPath, ErrPathNotAllowed)
	}
	for _, el := range strings.Split(hostPath, "/") {
		if el == ".." {
			return "", fmt.Errorf("resolve %q: %w: a parent (..) element", hostPath, ErrPathNotAllowed)
		}
	}
	clean := path.Clean(hostPath)
	if within(clean, AgentDir) {
		return "", fmt.Errorf("resolve %q: %w: %w %s", hostPath, ErrPathNotAllowed, ErrAgentDir, AgentDir)
	}
	if !allowed(clean) {
		return "", fmt.Errorf("resolve %q: %w: outside %s", hostPath, ErrPathNotAllowed, strings.Join(AllowedPrefixes(), ", "))
	}
	return strings.TrimPrefix(clean, "/"), nil
}

// MountPoint creates the host directory hostPath under root through the
// root's confined handle and returns its path, for the mount commands the
// volume manager runs (which take a path).
func MountPoint(root, hostPath string) (string, error) {
	rel, err := Resolve(hostPath)
	if err != nil {
		return "", err
	}
	dir, err := confined.Open(root)
	if err != nil {
		return "", fmt.Errorf("create mount point %s: %w", hostPath, err)
	}
	defer dir.Close()
	if err := dir.MkdirAll(rel, 0o755); err != nil {
		return "", fmt.Errorf("create mount point %s: %w", hostPath, err)
	}
	return filepath.Join(root, rel), nil
}

// OpenAgentDir opens AgentDir under root (creating it 0755) as a handle of
// its own: the agent's state, credentials and volume records are read and
// written through it, never through a rendered path.
func OpenAgentDir(root string) (*confined.Dir, error) {
	dir, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("open agent directory: %w", err)
	}
	defer dir.Close()
	sub, err := dir.Sub(strings.TrimPrefix(AgentDir, "/"), true, 0o755)
	if err != nil {
		return nil, fmt.Errorf("open agent directory: %w", err)
	}
	return sub, nil
}
