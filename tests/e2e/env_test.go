package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"kcore.dev/kcore/tests/kcache"
)

// What scripts/lab.sh and examples/lab/cluster.yaml create.
const (
	cluster = "lab"
	vip     = "10.77.0.100"
	apiPort = "6444"
	bridge  = "kcore-lab0"
	// labHost is the host's address on the bridge, where the controller
	// replicas and the registry listen.
	labHost   = "10.77.0.1"
	labScript = "scripts/lab.sh"
)

// labNode is one node of the lab.
type labNode struct{ id, name, addr string }

// labNodeN is the node scripts/lab.sh makes in its i-th namespace: id
// lab-nI, namespace suffix nI, address 10.77.0.1I.
func labNodeN(i int) labNode {
	return labNode{fmt.Sprintf("lab-n%d", i), fmt.Sprintf("n%d", i), fmt.Sprintf("10.77.0.1%d", i)}
}

// labNodes are the nodes of examples/lab/cluster.yaml.
func labNodes() []labNode { return []labNode{labNodeN(1), labNodeN(2), labNodeN(3)} }

// labNetns is the network namespace scripts/lab.sh makes for the node
// named name.
func labNetns(name string) string { return "kcore-lab-" + name }

// k8sBinaries are what the lab runs from the cache.
func k8sBinaries() []string {
	return []string{"etcd", "etcdctl", "etcdutl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl", "containerd", "containerd-shim-runc-v2"}
}

// lab is one running lab.
type lab struct {
	t      *testing.T
	repo   string
	dir    string
	k8sBin string
	kBin   string
	log    string
}

// manifestFile is the cluster manifest scripts/lab.sh applies: its copy of
// examples/lab/cluster.yaml whose registry mirrors carry the lab's CA.
func (l *lab) manifestFile() string {
	return filepath.Join(l.dir, "cluster.yaml")
}

// gate skips the test unless KCORE_E2E=1, root and the built binaries.
func gate(t *testing.T) (repo, k8sBin string) {
	t.Helper()
	if os.Getenv("KCORE_E2E") != "1" {
		t.Skip("SKIP: the e2e lab tests run only with KCORE_E2E=1 (as root, after make k8s-bins)")
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the e2e lab needs root (network namespaces, a bridge); run it as root")
	}
	cache, err := kcache.Dir()
	if err != nil {
		t.Skipf("SKIP: no KCORE_CACHE and no home directory: %v", err)
	}
	k8sBin = filepath.Join(cache, "bin", "current")
	for _, b := range k8sBinaries() {
		if _, err := os.Stat(filepath.Join(k8sBin, b)); err != nil {
			t.Skipf("SKIP: %s is missing: build the lab binaries with make k8s-bins", filepath.Join(k8sBin, b))
		}
	}
	for _, b := range []string{"keepalived", "runc", "nsenter", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			if _, serr := os.Stat("/usr/sbin/" + b); serr != nil {
				t.Skipf("SKIP: %s is missing: install it (make lab installs it with apt)", b)
			}
		}
	}
	repo, err = filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridge)); err == nil {
		t.Skipf("SKIP: a lab is already up (bridge %s exists); remove it with make lab-down", bridge)
	}
	return repo, k8sBin
}

// startLab builds kcore's binaries, runs scripts/lab.sh up (with LAB_APPLY=0
// when apply is false) and removes the lab when the test ends. extra are
// more environment variables for the script (LAB_NODES=5).
func startLab(t *testing.T, apply bool, extra ...string) *lab {
	t.Helper()
	repo, k8sBin := gate(t)
	dir := os.Getenv("KCORE_LAB_DIR")
	if dir == "" {
		dir = "/var/lib/kcore-lab"
	}
	l := &lab{t: t, repo: repo, dir: dir, k8sBin: k8sBin, kBin: t.TempDir(), log: filepath.Join(t.TempDir(), "lab.log")}
	build := exec.Command("go", "build", "-o", l.kBin+"/", "./cmd/kctl", "./cmd/kcore-controller", "./cmd/kcore-node-agent")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build kcore binaries: %v\n%s", err, out)
	}
	t.Cleanup(l.down)
	env := append([]string{"KEEP=1", "KCORE_BIN_DIR=" + l.kBin}, extra...)
	if !apply {
		env = append(env, "LAB_APPLY=0")
	}
	start := time.Now()
	if out, err := l.script(20*time.Minute, env, "up"); err != nil {
		t.Fatalf("scripts/lab.sh up: %v\n%s", err, out)
	}
	t.Logf("lab up in %s (log %s)", time.Since(start).Round(time.Second), l.log)
	return l
}

// script runs scripts/lab.sh ARGS with env, appending its output to the log.
func (l *lab) script(timeout time.Duration, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(l.repo, labScript), args...)
	cmd.Dir = l.repo
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if f, ferr := os.OpenFile(l.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); ferr == nil {
		f.Write(out)
		f.Close()
	}
	return string(out), err
}

// down removes the lab; on failure it first keeps the lab's logs.
func (l *lab) down() {
	if l.t.Failed() {
		l.keepLogs()
	}
	if out, err := l.script(2*time.Minute, nil, "down"); err != nil {
		l.t.Errorf("scripts/lab.sh down: %v\n%s", err, out)
	}
}

// keptLogsDir is where a failed lab's logs are copied, under the system's
// temporary directory, and kept after the test; maxKeptLogs bounds how
// many failed labs' logs it keeps, the newest.
const (
	keptLogsDir = "kcore-e2e-logs"
	maxKeptLogs = 20
)

// keepLogs copies the controllers', agents' and units' logs of a failed lab
// to a directory that outlives the test and names it in one line, so a
// failed scenario's own messages stay the last lines before its FAIL.
func (l *lab) keepLogs() {
	dir := filepath.Join(os.TempDir(), keptLogsDir, l.t.Name()+"-"+time.Now().UTC().Format("20060102T150405Z"))
	files, _ := filepath.Glob(filepath.Join(l.dir, "log", "*.log"))
	more, _ := filepath.Glob(filepath.Join(l.dir, "[nc]*", "var", "log", "kcore", "*.log"))
	kept := 0
	for _, f := range append(append(files, more...), l.log) {
		rel, err := filepath.Rel(l.dir, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		dst := filepath.Join(dir, rel)
		if os.MkdirAll(filepath.Dir(dst), 0o755) == nil && os.WriteFile(dst, data, 0o644) == nil {
			kept++
		}
	}
	l.t.Logf("the failed lab's %d log files are kept in %s", kept, dir)
	pruneKeptLogs(filepath.Dir(dir), maxKeptLogs)
}

// pruneKeptLogs removes all but the newest keep directories under parent.
func pruneKeptLogs(parent string, keep int) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	type kept struct {
		path string
		mod  time.Time
	}
	var dirs []kept
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() {
			dirs = append(dirs, kept{filepath.Join(parent, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].mod.After(dirs[j].mod) })
	for _, d := range dirs[min(keep, len(dirs)):] {
		os.RemoveAll(d.path)
	}
}

// run runs a command with a timeout and returns its standard output.
func run(timeout time.Duration, env []string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// kctl runs the lab's kctl against its controllers.
func (l *lab) kctl(timeout time.Duration, args ...string) (string, error) {
	return run(timeout, []string{"KCTL_CONFIG=" + filepath.Join(l.dir, "kctl.yaml")}, append([]string{filepath.Join(l.kBin, "kctl")}, args...)...)
}

// kubectl runs kubectl with node n1's admin.conf, whose server is the VIP.
func (l *lab) kubectl(args ...string) (string, error) {
	argv := append([]string{filepath.Join(l.k8sBin, "kubectl"), "--kubeconfig", filepath.Join(l.dir, "n1", "etc", "kubernetes", "admin.conf"), "--request-timeout=5s"}, args...)
	return run(15*time.Second, nil, argv...)
}

// eventually polls cond every 500ms until it returns nil or timeout passes.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := poll(timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s: %w", timeout, err)
		}
		<-tick.C
	}
}

// supervised is a node's supervisor state file.
type supervised struct {
	Units map[string]struct {
		State string `json:"state"`
		PID   int    `json:"pid"`
	} `json:"units"`
}

// units reads node n's supervisor state.
func (l *lab) units(n string) (supervised, error) {
	var s supervised
	data, err := os.ReadFile(filepath.Join(l.dir, n, "var", "lib", "kcore", "supervisor.json"))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(data, &s)
}

// unitPID is the pid of unit on node n.
func (l *lab) unitPID(n, unit string) (int, error) {
	s, err := l.units(n)
	if err != nil {
		return 0, err
	}
	u, ok := s.Units[unit]
	if !ok || u.PID == 0 {
		return 0, fmt.Errorf("unit %s not running on %s", unit, n)
	}
	return u.PID, nil
}

// killUnit SIGKILLs unit's process group on node n and returns its pid.
func (l *lab) killUnit(n, unit string) int {
	l.t.Helper()
	pid, err := l.unitPID(n, unit)
	if err != nil {
		l.t.Fatal(err)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		l.t.Fatalf("kill %s (pid %d) on %s: %v", unit, pid, n, err)
	}
	return pid
}

// vipHolders are the nodes whose eth0 holds the VIP.
func vipHolders() ([]string, error) { return addrHolders(vip) }

// addrHolders are the lab's three first nodes whose eth0 holds addr.
func addrHolders(addr string) ([]string, error) {
	var out []string
	for _, n := range labNodes() {
		addrs, err := run(5*time.Second, nil, "ip", "-n", labNetns(n.name), "-br", "addr", "show", "eth0")
		if err != nil {
			return nil, err
		}
		if strings.Contains(addrs, " "+addr+"/") {
			out = append(out, n.name)
		}
	}
	return out, nil
}

// vipHolder waits until exactly one node holds the VIP and returns it.
func vipHolder(t *testing.T, timeout time.Duration, not string) string {
	t.Helper()
	var holder string
	eventually(t, "one VIP holder", timeout, func() error {
		h, err := vipHolders()
		if err != nil {
			return err
		}
		if len(h) != 1 {
			return fmt.Errorf("VIP %s held by %v", vip, h)
		}
		if h[0] == not {
			return fmt.Errorf("VIP %s still on %s", vip, not)
		}
		holder = h[0]
		return nil
	})
	return holder
}

// readyz asks /readyz through the VIP.
func (l *lab) readyz() error {
	out, err := l.kubectl("get", "--raw", "/readyz")
	if err != nil {
		return err
	}
	if strings.TrimSpace(out) != "ok" {
		return fmt.Errorf("/readyz through the VIP answered %q", out)
	}
	return nil
}

// healthy is nil when kctl kubernetes health says the cluster is ready.
func (l *lab) healthy() error {
	out, err := l.kctl(30*time.Second, "kubernetes", "health", cluster)
	if err != nil {
		first, _, _ := strings.Cut(out, "\n")
		return fmt.Errorf("%w (%s)", err, first)
	}
	return nil
}

// healthOutput is what kctl kubernetes health prints, whatever its exit code.
func (l *lab) healthOutput() string {
	out, _ := l.kctl(30*time.Second, "kubernetes", "health", cluster)
	return out
}

// firstLine is the first line of out.
func firstLine(out string) string {
	first, _, _ := strings.Cut(out, "\n")
	return first
}

// nodeID is the cluster node id of the lab namespace suffix name (n1 → lab-n1).
func nodeID(name string) string {
	for _, n := range labNodes() {
		if n.name == name {
			return n.id
		}
	}
	return name
}
