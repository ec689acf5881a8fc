package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/volume"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		path     string
		want     string // "" means refused
		agentDir bool   // refused as the agent's own directory
	}{
		{path: "/etc/kubernetes/pki/ca.crt", want: "etc/kubernetes/pki/ca.crt"},
		{path: "/etc/kubernetes", want: "etc/kubernetes"},
		{path: "/etc/kubernetes//pki/./x", want: "etc/kubernetes/pki/x"},
		{path: "/mnt/kcore/lab/kcore-kdata", want: "mnt/kcore/lab/kcore-kdata"},
		{path: "/etc/kcore/node-state.json", want: "etc/kcore/node-state.json"},
		{path: "/etc/cni/net.d/10-bridge.conf", want: "etc/cni/net.d/10-bridge.conf"},
		{path: "/etc/containerd/certs.d/docker.io/hosts.toml", want: "etc/containerd/certs.d/docker.io/hosts.toml"},
		{path: "/etc/containerdX/config.toml"},
		{path: "/etc/passwd"},
		{path: "/etc/kubernetes/../passwd"},
		{path: "/etc/kubernetes/.."},
		{path: "etc/kubernetes/x"},
		{path: ""},
		{path: "/etc/kubernetesX/x"},
		{path: "/etc"},
		{path: "/"},
		{path: "/var/lib/kcore", agentDir: true},
		{path: "/var/lib/kcore/agent/node.key", agentDir: true},
		{path: "/var/lib/kcore//agent-state.json", agentDir: true},
		{path: "/var/lib/kcore/./volumes.json", agentDir: true},
		{path: "/var/lib/kcore/controller/raft.db", agentDir: true},
		{path: "/var/lib/kcore-lab/x"},
		{path: "/var/lib/kcore/\x00x"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := Resolve(tt.path)
			if tt.want == "" {
				if !errors.Is(err, ErrPathNotAllowed) {
					t.Fatalf("Resolve(%q) = %q, %v; want ErrPathNotAllowed", tt.path, got, err)
				}
				if errors.Is(err, ErrAgentDir) != tt.agentDir {
					t.Fatalf("Resolve(%q) = %v; ErrAgentDir want %v", tt.path, err, tt.agentDir)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
			}
		})
	}
}

// escapeRoot is a root whose allow-listed directories hold symlinks out of
// it (absolute and relative), into the agent's own directory, and out of
// the allow-list; outside must stay empty.
func escapeRoot(t testing.TB) (root, outside string) {
	t.Helper()
	root, outside = t.TempDir(), t.TempDir()
	for _, d := range []string{"etc/kubernetes", "etc/kcore", "var/lib/kcore/agent", "etc/nftables.d"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "var/lib/kcore/agent/node.key"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"etc/keepalived":             outside,
		"etc/kcore/link":             outside,
		"etc/kubernetes/rel":         "../../../" + filepath.Base(outside),
		"etc/kubernetes/agent":       "../../var/lib/kcore/agent",
		"etc/kubernetes/admin.conf":  filepath.Join(outside, "passwd"),
		"var/lib/etcd":               "../../etc",
		"etc/nftables.d/kcore.nft":   "../kubernetes/agent/node.key",
		"etc/kubernetes/pki-outside": outside,
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

// assertUntouched fails when anything was written outside the root or into
// the agent's directory of root.
func assertUntouched(t testing.TB, root, outside string) {
	t.Helper()
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote %d entries outside the root", len(entries))
	}
	if got, _ := os.ReadFile(filepath.Join(root, "var/lib/kcore/agent/node.key")); string(got) != "key" {
		t.Fatalf("the node key holds %q", got)
	}
}

// TestEveryRootOperationRefusesEscapes runs every file operation the
// applier does on rendered paths against paths that cross a symlink out of
// the root, into the agent's directory or out of the allow-list.
func TestEveryRootOperationRefusesEscapes(t *testing.T) {
	root, outside := escapeRoot(t)
	host, err := confined.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	a := &Applier{Root: root, host: host}
	paths := []string{
		"/etc/keepalived/keepalived.conf",
		"/etc/kcore/link/x",
		"/etc/kubernetes/rel/x",
		"/etc/kubernetes/agent/node.key",
		"/etc/kubernetes/pki-outside/sub/ca.key",
		"/var/lib/etcd/passwd",
		"/etc/nftables.d/kcore.nft/x",
		"/etc/kubernetes/admin.conf/x",
	}
	for _, p := range paths {
		rel, err := Resolve(p)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", p, err)
		}
		f := api.File{Path: p, Content: "owned"}
		d, err := measure(f, DefaultMaxFileBytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writeFile(host, rel, f, d); !errors.Is(err, confined.ErrEscape) {
			t.Errorf("writeFile(%q) = %v, want ErrEscape", p, err)
		}
		if err := host.MkdirAll(rel, 0o755); !errors.Is(err, confined.ErrEscape) {
			t.Errorf("MkdirAll(%q) = %v, want ErrEscape", p, err)
		}
		if err := a.removeRecorded(p); !errors.Is(err, confined.ErrEscape) {
			t.Errorf("removeRecorded(%q) = %v, want ErrEscape", p, err)
		}
		if unchanged(host, rel, DefaultFileMode, d) {
			t.Errorf("unchanged(%q) read through a symlink", p)
		}
		if _, err := MountPoint(root, p); !errors.Is(err, confined.ErrEscape) {
			t.Errorf("MountPoint(%q) = %v, want ErrEscape", p, err)
		}
	}
	for _, p := range []string{"/etc/kubernetes/../../x", "etc/kubernetes/x", "/var/lib/kcore/agent/node.key"} {
		if err := a.removeRecorded(p); err != nil {
			t.Errorf("removeRecorded(%q) = %v, want it forgotten", p, err)
		}
		if _, err := MountPoint(root, p); !errors.Is(err, ErrPathNotAllowed) {
			t.Errorf("MountPoint(%q) = %v, want ErrPathNotAllowed", p, err)
		}
	}
	assertUntouched(t, root, outside)
}

// TestApplyAfterSwapWritesNothingOutside swaps a directory for a symlink
// to outside after the state was checked (in the volume phase, which runs
// before the files): the file fails, nothing lands outside.
func TestApplyAfterSwapWritesNothingOutside(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	pki := filepath.Join(root, "etc/kubernetes/pki")
	mustMkdir(t, pki)
	a := newApplier(root, &fakeRuntime{}, execrun.NewRecorder())
	a.Volumes = swapVolumes{swap: func() {
		os.RemoveAll(pki)
		mustSymlink(t, outside, pki)
	}}
	ns := api.NodeState{Cluster: "c", NodeID: "n", Generation: 1,
		Volumes: []api.VolumeOp{{Name: "v"}},
		Files:   []api.File{{Path: "/etc/kubernetes/pki/ca.key", Content: "k", Mode: 0o600}}}
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	if msg := itemMessages(reps, KindFile)["/etc/kubernetes/pki/ca.key"]; !strings.Contains(msg, confined.ErrEscape.Error()) {
		t.Fatalf("file reported %q, want an escape refused", msg)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote %d entries outside the root", len(entries))
	}
}

// swapVolumes is a volume ensurer that runs swap while "ensuring".
type swapVolumes struct{ swap func() }

func (s swapVolumes) Ensure(context.Context, api.VolumeOp) (volume.Outcome, error) {
	s.swap()
	return volume.Outcome{}, nil
}

func (s swapVolumes) Purge(context.Context, api.VolumeOp) error { return nil }

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/etc/kubernetes/a", "/etc/../etc/kubernetes", "/mnt/kcore/x/../../..", "/var/lib/kcore/./a//b", "/run/kcore/\x00", "/etc/kcore/link/x", "/etc/kubernetes/rel/x"} {
		f.Add(s)
	}
	root, outside := escapeRoot(f)
	host, err := confined.Open(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { host.Close() })
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := Resolve(p)
		if err != nil {
			return
		}
		if !filepath.IsLocal(rel) {
			t.Fatalf("Resolve(%q) = %q is not beneath the root", p, rel)
		}
		if !allowed("/"+rel) || within("/"+rel, AgentDir) {
			t.Fatalf("Resolve(%q) = %q is outside the allow-list", p, rel)
		}
		if strings.Contains("/"+p+"/", "/../") {
			t.Fatalf("Resolve(%q) accepted ..", p)
		}
		// Whatever the write does, it stays beneath the root and off the agent's directory.
		host.WriteFile(rel, strings.NewReader("fuzz"), 0o644)
		assertUntouched(t, root, outside)
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
