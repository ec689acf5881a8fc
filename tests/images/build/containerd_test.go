package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

// containerdStartTimeout bounds waiting for the test's containerd to answer.
const containerdStartTimeout = 30 * time.Second

// ctrTimeout bounds one ctr command (a pull of every image, a run).
const ctrTimeout = 3 * time.Minute

// cachedContainerd returns the containerd and ctr binaries built into the
// cache (bin/current/, else bin/containerd-*/ and bin/ctr-*/) and the
// directories to search for the runc shim, or skips.
func cachedContainerd(t *testing.T) (string, string, []string) {
	t.Helper()
	bin := filepath.Join(labCache(t), "bin")
	find := func(name string) string {
		for _, pattern := range []string{"current/" + name, name + "-*/" + name, "containerd*/" + name} {
			if m, _ := filepath.Glob(filepath.Join(bin, pattern)); len(m) > 0 {
				return m[len(m)-1]
			}
		}
		return ""
	}
	daemon, ctl, shim := find("containerd"), find("ctr"), find("containerd-shim-runc-v2")
	if daemon == "" || ctl == "" {
		t.Skipf("no containerd and ctr built in %s", bin)
	}
	path := []string{filepath.Dir(daemon)}
	if shim != "" {
		path = append(path, filepath.Dir(shim))
	}
	return daemon, ctl, path
}

// hostsDir writes a containerd hosts directory mirroring every registry the
// images come from through the registry at addr. The server is the mirror
// too, so a failed mirror falls back to loopback, never to the internet.
func hostsDir(t *testing.T, imgs []pinned, addr, ca string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range imgs {
		r, err := name.ParseReference(p.Ref, name.StrictValidation)
		if err != nil {
			t.Fatal(err)
		}
		host := r.Context().RegistryStr()
		if host == name.DefaultRegistry {
			host = "docker.io"
		}
		toml := fmt.Sprintf("server = %q\nca = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n",
			"https://"+addr, ca, "https://"+addr, ca)
		if err := os.MkdirAll(filepath.Join(dir, host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startContainerd runs containerd with its root, state and socket in a
// temporary directory and returns the socket.
func startContainerd(t *testing.T, daemon, ctl string, path []string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kcd-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "c.sock")
	cfg := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "opt"))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config", filepath.Join(dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = logf, logf
	// The shim is found in the cache first, as a cache build ships it.
	cmd.Env = append(os.Environ(), "PATH="+strings.Join(append(path, os.Getenv("PATH")), ":"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		for _, m := range mountsUnder(dir) {
			_ = exec.Command("umount", "-l", m).Run()
		}
		_ = os.RemoveAll(dir)
	})
	deadline := time.Now().Add(containerdStartTimeout)
	for {
		// ctr waits up to its connect timeout for the socket: the poll's pace.
		if err := exec.Command(ctl, "--address", sock, "--connect-timeout", "1s", "version").Run(); err == nil {
			return sock
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
			t.Fatalf("containerd did not answer within %s:\n%s", containerdStartTimeout, b)
		}
	}
}

// mountsUnder lists the mounts below dir, deepest first.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
			out = append([]string{f[1]}, out...)
		}
	}
	return out
}

// ctr runs ctr against the socket in a test namespace.
func ctr(t *testing.T, ctl, sock string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctrTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctl, append([]string{"--address", sock, "--namespace", "kcore-images-test"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ctr %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	// Only standard output: ctr logs warnings (containerd 2 on cgroup v1) to stderr.
	return string(out)
}

// TestContainerdPullsThroughMirror pulls every built image by its original
// reference through a hosts.toml mirror to the lab registry (ctr --hosts-dir,
// as kubelet's containerd resolves them), then runs the echo image's binary.
func TestContainerdPullsThroughMirror(t *testing.T) {
	_, imgs := builtImages(t)
	daemon, ctl, path := cachedContainerd(t)
	addr, reg := startRegistry(t)
	hosts := hostsDir(t, imgs, addr, filepath.Join(reg, "pki", "ca.crt"))
	sock := startContainerd(t, daemon, ctl, path)
	var echo string
	for _, p := range imgs {
		ctr(t, ctl, sock, "images", "pull", "--hosts-dir", hosts, "--platform", "linux/amd64", p.Ref)
		if p.Name == "echo" {
			echo = p.Ref
		}
	}
	list := ctr(t, ctl, sock, "images", "list", "--quiet")
	for _, p := range imgs {
		if !strings.Contains(list, p.Ref+"\n") {
			t.Errorf("containerd lacks %s after the pull:\n%s", p.Ref, list)
		}
	}
	out := ctr(t, ctl, sock, "run", "--rm", echo, "kcore-echo-check", "/echo", "-version")
	if want := "kcore-echo " + echo[strings.LastIndex(echo, ":")+1:]; strings.TrimSpace(out) != want {
		t.Errorf("echo -version in the image printed %q, want %q", out, want)
	}
}
