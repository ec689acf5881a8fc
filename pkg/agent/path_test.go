package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mustMkdir(t, filepath.Join(root, "etc/kubernetes"))
	mustMkdir(t, filepath.Join(root, "etc/kcore"))
	mustMkdir(t, filepath.Join(root, "var/lib"))
	// /etc/keepalived -> a directory outside the root.
	mustSymlink(t, outside, filepath.Join(root, "etc/keepalived"))
	// /var/lib/etcd -> /etc (inside the root, outside the allow-list).
	mustSymlink(t, filepath.Join(root, "etc"), filepath.Join(root, "var/lib/etcd"))
	// /etc/kubernetes/admin.conf -> /etc/passwd of the real host.
	mustSymlink(t, "/etc/passwd", filepath.Join(root, "etc/kubernetes/admin.conf"))
	// /etc/cni -> /etc/kcore (inside the allow-list).
	mustSymlink(t, filepath.Join(root, "etc/kcore"), filepath.Join(root, "etc/cni"))

	tests := []struct {
		path string
		want string // "" means refused
	}{
		{path: "/etc/kubernetes/pki/ca.crt", want: "/etc/kubernetes/pki/ca.crt"},
		{path: "/etc/kubernetes", want: "/etc/kubernetes"},
		{path: "/etc/kubernetes//pki/./x", want: "/etc/kubernetes/pki/x"},
		{path: "/mnt/kcore/lab/kcore-kdata", want: "/mnt/kcore/lab/kcore-kdata"},
		{path: "/etc/kcore/node-state.json", want: "/etc/kcore/node-state.json"},
		{path: "/etc/cni/net.d/10-bridge.conf", want: "/etc/cni/net.d/10-bridge.conf"},
		{path: "/etc/passwd"},
		{path: "/etc/kubernetes/../passwd"},
		{path: "/etc/kubernetes/.."},
		{path: "etc/kubernetes/x"},
		{path: ""},
		{path: "/etc/kubernetesX/x"},
		{path: "/etc"},
		{path: "/"},
		{path: "/etc/keepalived/keepalived.conf"},
		{path: "/var/lib/etcd/shadow"},
		{path: "/etc/kubernetes/admin.conf"},
		{path: "/var/lib/kcore/\x00x"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Resolve(root, tt.path)
			if tt.want == "" {
				if !errors.Is(err, ErrPathNotAllowed) {
					t.Fatalf("Resolve(%q) = %q, %v; want ErrPathNotAllowed", tt.path, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve: %v", err)
			}
			if got != filepath.Join(root, tt.want) {
				t.Fatalf("Resolve = %q, want %q", got, filepath.Join(root, tt.want))
			}
		})
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/etc/kubernetes/a", "/etc/../etc/kubernetes", "/mnt/kcore/x/../../..", "/var/lib/kcore/./a//b", "/run/kcore/\x00", "/etc/kcore/link/x"} {
		f.Add(s)
	}
	root := f.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc/kcore"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(root, "etc/kcore/link")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Resolve(root, p)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, got)
		if rerr != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("Resolve(%q) = %q escapes the root", p, got)
		}
		if !allowed("/" + rel) {
			t.Fatalf("Resolve(%q) = %q is outside the allow-list", p, got)
		}
		if strings.Contains(p, "..") && strings.Contains("/"+p+"/", "/../") {
			t.Fatalf("Resolve(%q) accepted ..", p)
		}
		if rel == "etc/kcore/link" || strings.HasPrefix(rel, "etc/kcore/link/") {
			t.Fatalf("Resolve(%q) went through a symlink to /", p)
		}
	})
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
