package cridrain

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"

	"kcore.dev/kcore/manifests"
)

// containerdVersion is the containerd 2 release the lab caches.
const containerdVersion = "v2.4.2"

// containerdStartTimeout bounds waiting for the test's containerd to
// answer, ctrTimeout one ctr command, shimExitTimeout the shim's exit
// after its sandbox is removed.
const (
	containerdStartTimeout = 30 * time.Second
	ctrTimeout             = 2 * time.Minute
	shimExitTimeout        = 30 * time.Second
)

// cachedBinary returns NAME from the cache's NAME-VERSION directory, or
// skips.
func cachedBinary(t *testing.T, name string) string {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	p := filepath.Join(home, ".cache", "kcore", "bin", name+"-"+containerdVersion, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no cached %s: %v", name, err)
	}
	return p
}

// startContainerd runs containerd 2 with the CRI, its root, state and
// socket in a temporary directory (cgroupfs, the pause image pinned as the
// sandbox image, oom_score_adj kept at least the daemon's so that a host
// without CAP_SYS_RESOURCE runs the sandbox), and returns the directory and the socket.
func startContainerd(t *testing.T, daemon, shim, ctl string) (string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "kcd-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "c.sock")
	cfg := fmt.Sprintf(`version = 3
root = %q
state = %q
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = ""
[metrics]
  address = ""
[plugins]
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %q
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    conf_dir = %q
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
    SystemdCgroup = false
  [plugins.'io.containerd.internal.v1.opt']
    path = %q
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", manifests.PauseImage,
		filepath.Join(dir, "cni"), filepath.Join(dir, "opt"))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config", filepath.Join(dir, "config.toml"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(shim)+":"+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Shims the drain left (a failed test) go with the daemon.
		for _, pid := range shimsOf(sock) {
			for _, child := range childrenOf(pid) {
				_ = syscall.Kill(child, syscall.SIGKILL)
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
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
			return dir, sock
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

// shimsOf lists the pids of the runc shims serving the containerd at sock.
func shimsOf(sock string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if !strings.HasSuffix(argv[0], "containerd-shim-runc-v2") {
			continue
		}
		for i := 1; i < len(argv); i++ {
			if argv[i-1] == "-address" && argv[i] == sock {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// childrenOf lists the pids whose parent is pid (a shim's containers).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if child, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, child)
			}
		}
	}
	return out
}

// TestDrainRealContainerd runs a pod sandbox (host network, so no CNI)
// in a real containerd 2 through its CRI, drains it, and checks that no
// sandbox is listed and its shim is gone.
func TestDrainRealContainerd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run containers")
	}
	daemon, shim, ctl := cachedBinary(t, "containerd"), cachedBinary(t, "containerd-shim-runc-v2"), cachedBinary(t, "ctr")
	home, _ := os.UserHomeDir()
	pause := filepath.Join(home, ".cache", "kcore", "images", "pause.oci.tar")
	if _, err := os.Stat(pause); err != nil {
		t.Skipf("no cached pause image: %v", err)
	}
	dir, sock := startContainerd(t, daemon, shim, ctl)
	ctx, cancel := context.WithTimeout(context.Background(), ctrTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, ctl, "--address", sock, "-n", "k8s.io", "images", "import", "--platform", "linux/amd64", pause).CombinedOutput(); err != nil {
		t.Fatalf("import pause: %v\n%s", err, out)
	}

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := cri.NewRuntimeServiceClient(conn)
	run, err := rt.RunPodSandbox(ctx, &cri.RunPodSandboxRequest{Config: &cri.PodSandboxConfig{
		Metadata:     &cri.PodSandboxMetadata{Name: "drain-me", Namespace: "default", Uid: "drain-me-uid"},
		LogDirectory: filepath.Join(dir, "pods"),
		Linux: &cri.LinuxPodSandboxConfig{SecurityContext: &cri.LinuxSandboxSecurityContext{
			NamespaceOptions: &cri.NamespaceOption{Network: cri.NamespaceMode_NODE},
		}},
	}})
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "containerd.log"))
		t.Fatalf("run pod sandbox: %v\n%s", err, b)
	}
	if len(shimsOf(sock)) == 0 {
		t.Fatalf("no shim runs sandbox %s", run.PodSandboxId)
	}

	if err := Drain(context.Background(), "unix://"+sock, Options{}); err != nil {
		t.Fatalf("drain: %v", err)
	}
	list, err := rt.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Fatalf("sandboxes left after the drain: %v", list.Items)
	}
	deadline := time.Now().Add(shimExitTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for left := shimsOf(sock); len(left) > 0; left = shimsOf(sock) {
		if time.Now().After(deadline) {
			t.Fatalf("shims %v still run %s after the drain", left, shimExitTimeout)
		}
		<-tick.C
	}
}
