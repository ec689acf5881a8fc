package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCiliumSetReadsTheRepository pairs the Cilium recipes with the
// references tests/cilium/images.go pins: the chart's repositories, one
// release.
func TestCiliumSetReadsTheRepository(t *testing.T) {
	rs, err := recipesOf(setCilium)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := pinnedSet(filepath.Join(repoRoot, "tests", "cilium", "images.go"), rs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range imgs {
		got[p.Name] = p.Ref
	}
	agent, op := got["cilium"], got["operator-generic"]
	if !strings.HasPrefix(agent, "quay.io/cilium/cilium:v") || !strings.HasPrefix(op, "quay.io/cilium/operator-generic:v") {
		t.Errorf("cilium %q, operator-generic %q", agent, op)
	}
	if agent[strings.LastIndex(agent, ":"):] != op[strings.LastIndex(op, ":"):] {
		t.Errorf("the agent (%s) and the operator (%s) are of different releases", agent, op)
	}
	if _, err := pinnedSet(filepath.Join(repoRoot, "manifests", "images.go"), rs); !errors.Is(err, ErrUnknownImage) {
		t.Errorf("cilium set from manifests/images.go: %v, want ErrUnknownImage", err)
	}
}

// TestCopyIn copies a file, a directory tree and a symlink into a root
// filesystem with their modes, and refuses what is none of those and a
// tree beyond maxCopiedFiles.
func TestCopyIn(t *testing.T) {
	src := t.TempDir()
	write := func(p string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(p), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(src, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("bpf/bpf_lxc.c", 0o644)
	write("bpf/include/lib.h", 0o600)
	write("scripts/init.sh", 0o755)
	if err := os.Symlink("bpf_lxc.c", filepath.Join(src, "bpf", "link.c")); err != nil {
		t.Fatal(err)
	}
	fs := rootfs{}
	for dst, from := range map[string]string{"/var/lib/cilium/bpf": "bpf", "/init.sh": "scripts/init.sh"} {
		if err := fs.copyIn(dst, filepath.Join(src, from)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range map[string]struct {
		typ  byte
		mode int64
	}{
		"/var/lib/cilium/bpf":               {tar.TypeDir, 0o755},
		"/var/lib/cilium/bpf/bpf_lxc.c":     {tar.TypeReg, 0o644},
		"/var/lib/cilium/bpf/include/lib.h": {tar.TypeReg, 0o600},
		"/var/lib/cilium/bpf/link.c":        {tar.TypeSymlink, 0o777},
		"/init.sh":                          {tar.TypeReg, 0o755},
		"/var/lib/cilium":                   {tar.TypeDir, 0o755},
	} {
		e, ok := fs[p]
		if !ok || e.Type != want.typ || e.Mode != want.mode {
			t.Errorf("%s: %+v (present %v), want type %c mode %o", p, e, ok, want.typ, want.mode)
		}
	}
	if string(fs["/var/lib/cilium/bpf/bpf_lxc.c"].Data) != "bpf/bpf_lxc.c" || fs["/var/lib/cilium/bpf/link.c"].Link != "bpf_lxc.c" {
		t.Errorf("contents not copied: %+v", fs)
	}
	if err := fs.copyIn("/missing", filepath.Join(src, "missing")); err == nil {
		t.Error("copying a missing path succeeded")
	}
	many := t.TempDir()
	for i := 0; i <= maxCopiedFiles; i++ {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := (rootfs{}).copyIn("/many", many); err == nil {
		t.Errorf("a tree of more than %d entries was copied", maxCopiedFiles)
	}
}

// TestCiliumImageRunsItsToolchain imports the built Cilium agent image into
// a containerd of its own and runs in it what the agent runs at start-up:
// clang and llc from PATH (LLVM 19, not Debian's default 14), over the
// datapath sources at the path the agent reads, and the agent itself.
func TestCiliumImageRunsItsToolchain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (containerd)")
	}
	imgs, err := pinnedSet(filepath.Join(repoRoot, "tests", "cilium", "images.go"), ciliumRecipes())
	if err != nil {
		t.Fatal(err)
	}
	var agent pinned
	for _, p := range imgs {
		if p.Name == "cilium" {
			agent = p
		}
	}
	archive := archivePath(filepath.Join(labCache(t), "images", "cilium"), agent)
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("Cilium's images not built (scripts/build-images.sh --set cilium): %v", err)
	}
	daemon, ctl, path := cachedContainerd(t)
	sock := startContainerd(t, daemon, ctl, path)
	ctr(t, ctl, sock, "images", "import", "--platform", "linux/amd64", archive)
	for i, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"clang", "--version"}, "clang version 19."},
		{[]string{"llc", "--version"}, "LLVM version 19."},
		{[]string{"cilium-agent", "--version"}, "cilium-agent " + strings.TrimPrefix(agent.Ref[strings.LastIndex(agent.Ref, ":")+1:], "v") + " "},
		{[]string{"sh", "-c", "test -f /var/lib/cilium/bpf/bpf_lxc.c && test -x /opt/cni/bin/cilium-cni && test -x /install-plugin.sh && echo sources"}, "sources"},
	} {
		out := ctr(t, ctl, sock, append([]string{"run", "--rm", agent.Ref, fmt.Sprintf("kcore-cilium-check-%d", i)}, c.argv...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s in the image printed %q, want %q", strings.Join(c.argv, " "), out, c.want)
		}
	}
}
