package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What scripts/lab.sh and examples/lab/cluster.yaml create.
const (
	labCluster  = "lab"
	labVIP      = "10.77.0.100"
	labAPIPort  = "6444"
	labBridge   = "kcore-lab0"
	labScript   = "scripts/lab.sh"
	labManifest = "examples/lab/cluster.yaml"
	// labCopy is the copy of labManifest scripts/lab.sh writes under the
	// lab directory, its registry mirrors carrying the lab registry's CA.
	labCopy = "cluster.yaml"
	labDir  = "/var/lib/kcore-lab"
)

// labNode is one node of the lab: namespace suffix and address.
type labNode struct{ name, addr string }

// labNodes are the control planes of examples/lab/cluster.yaml.
func labNodes() []labNode {
	return []labNode{{"n1", "10.77.0.11"}, {"n2", "10.77.0.12"}, {"n3", "10.77.0.13"}}
}

// labK8sBinaries are what the lab runs from the cache.
func labK8sBinaries() []string {
	return []string{"etcd", "etcdctl", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "kubectl", "containerd", "containerd-shim-runc-v2"}
}

// LabOptions shape the lab figures (5b, 6, 7).
type LabOptions struct {
	// Repo is the repository root (scripts/lab.sh, examples/lab/cluster.yaml).
	Repo string
	// BinDir holds kctl, kcore-controller and kcore-node-agent.
	BinDir string
	// Cache is the Kubernetes binary cache (KCORE_CACHE; bin/current under it).
	Cache string
	// Lock is the lab lock file; empty means the caller holds it.
	Lock string
	// LockWait bounds the wait for the lock (default 5 min).
	LockWait time.Duration
	// Runs is the run count of each lab figure (default 3).
	Runs int
}

// labFigures brings the lab up (controllers and agents, no apply), measures
// figure 6 (apply --wait against the hand-started floor), figure 5b (VIP
// moves), figure 7 (rolling control-plane updates) and figure 5c (Cilium's
// L2 address moves, on machines of its own) and takes the lab down again,
// whatever happened.
func labFigures(ctx context.Context, o LabOptions, dataDir string, progress func(string)) ([]Figure, error) {
	if why := labSkip(o); why != "" {
		return nil, errors.New(why)
	}
	release, err := takeLabLock(ctx, o.Lock, o.LockWait, progress)
	if err != nil {
		return nil, err
	}
	defer release()
	if _, err := os.Stat(filepath.Join("/sys/class/net", labBridge)); err == nil {
		return nil, fmt.Errorf("a lab is already up (bridge %s exists): remove it with make lab-down", labBridge)
	}
	l := &labEnv{o: o, dir: labDir, k8sBin: filepath.Join(o.Cache, "bin", "current"), floor: filepath.Join(dataDir, "lab-floor"), progress: progress}
	defer l.down()
	start := time.Now()
	if err := l.up(ctx); err != nil {
		return nil, err
	}
	progress(fmt.Sprintf("lab up (no apply) in %s", time.Since(start).Round(time.Second)))
	r := &readyBench{l: l}
	var vip, roll []Figure
	for i := range o.Runs {
		if err := r.oursOnce(ctx, i); err != nil {
			return nil, err
		}
		if i == o.Runs-1 {
			vip, err = vipFigures(ctx, l, o.Runs, progress)
			if err != nil {
				return nil, err
			}
			roll, err = rollFigures(ctx, l, o.Runs, progress)
			if err != nil {
				// The cluster is deleted next; the other figures stand.
				progress(fmt.Sprintf("figure 7 not measured: %v", err))
				why, _, _ := strings.Cut(err.Error(), "\n")
				roll = []Figure{notMeasured("7", "rolling control-plane update and the /readyz gap through the VIP", why)}
			}
		}
		if err := l.deleteCluster(ctx); err != nil {
			return nil, err
		}
		if err := r.floorOnce(ctx, i); err != nil {
			return nil, err
		}
	}
	l2 := l2Figures(ctx, l, o.Runs, progress)
	return slices.Concat(r.figures(), vip, l2, roll), nil
}

// labSkip says why the lab figures cannot run here, or "".
func labSkip(o LabOptions) string {
	if os.Geteuid() != 0 {
		return "skipped: the lab needs root (network namespaces, a bridge)"
	}
	for _, b := range labK8sBinaries() {
		p := filepath.Join(o.Cache, "bin", "current", b)
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("skipped: %s is missing (build the lab binaries with make k8s-bins)", p)
		}
	}
	for _, b := range []string{"kctl", "kcore-controller", "kcore-node-agent"} {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return fmt.Sprintf("skipped: %s is missing (make build)", filepath.Join(o.BinDir, b))
		}
	}
	for _, b := range []string{"keepalived", "runc", "nsenter", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			if _, serr := os.Stat("/usr/sbin/" + b); serr != nil {
				return fmt.Sprintf("skipped: %s is missing (make lab installs it with apt)", b)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(o.Repo, labScript)); err != nil {
		return fmt.Sprintf("skipped: no %s under -repo %s", labScript, o.Repo)
	}
	return ""
}

// takeLabLock takes the lab lock (flock on path) for the lab figures,
// waiting at most wait. A lock the caller already holds through an
// inherited descriptor (flock(1) around kcore-bench) counts as taken.
func takeLabLock(ctx context.Context, path string, wait time.Duration, progress func(string)) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	if fd, ok := inheritedFD(path); ok && syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		progress("lab lock " + path + ": held by the caller")
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lab lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("take lab lock %s (waited %s): %w", path, wait, err)
		}
		if !said {
			progress("lab lock " + path + " is held by another lab user: waiting up to " + wait.String())
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// inheritedFD finds an open descriptor of this process on path.
func inheritedFD(path string) (int, bool) {
	want, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || target != want {
			continue
		}
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			return fd, true
		}
	}
	return 0, false
}

// labEnv is one running lab.
type labEnv struct {
	o        LabOptions
	dir      string
	k8sBin   string
	floor    string
	progress func(string)
}

func (l *labEnv) scriptEnv() []string {
	return append(os.Environ(), "KCORE_BIN_DIR="+l.o.BinDir, "KCORE_CACHE="+l.o.Cache, "KCORE_LAB_DIR="+l.dir, "LAB_APPLY=0")
}

// up runs scripts/lab.sh up with LAB_APPLY=0: network, controllers, agents.
func (l *labEnv) up(ctx context.Context) error {
	out, err := l.run(ctx, 10*time.Minute, l.scriptEnv(), filepath.Join(l.o.Repo, labScript), "up")
	if err != nil {
		return fmt.Errorf("bring the lab up: %w\n%s", err, tail(out, 20))
	}
	return nil
}

// down removes the lab (scripts/lab.sh down), with its own deadline so it
// runs even when ctx is done.
func (l *labEnv) down() {
	out, err := l.run(context.Background(), 3*time.Minute, l.scriptEnv(), filepath.Join(l.o.Repo, labScript), "down")
	if err != nil {
		l.progress(fmt.Sprintf("lab down failed: %v\n%s", err, tail(out, 20)))
		return
	}
	l.progress("lab down: " + strings.ReplaceAll(tail(out, 2), "\n", "; "))
	if _, err := os.Stat(filepath.Join("/sys/class/net", labBridge)); err == nil {
		l.progress("WARNING: bridge " + labBridge + " is still there after scripts/lab.sh down: remove the lab with make lab-down")
	}
}

// manifest is the cluster manifest the lab applies: scripts/lab.sh's copy
// of examples/lab/cluster.yaml whose registry mirrors trust the lab
// registry, so the add-ons' images are pulled as in make lab.
func (l *labEnv) manifest() string { return filepath.Join(l.dir, labCopy) }

// kctl runs the lab's kctl against its controllers.
func (l *labEnv) kctl(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	env := append(os.Environ(), "KCTL_CONFIG="+filepath.Join(l.dir, "kctl.yaml"))
	return l.run(ctx, timeout, env, filepath.Join(l.o.BinDir, "kctl"), args...)
}

// deleteCluster deletes the cluster, waits for the teardown and wipes
// every node's etcd data, so the next apply starts from nothing.
func (l *labEnv) deleteCluster(ctx context.Context) error {
	start := time.Now()
	if out, err := l.kctl(ctx, 6*time.Minute, "kubernetes", "delete", labCluster, "--yes", "--wait", "--timeout", "5m"); err != nil {
		return fmt.Errorf("delete the lab cluster: %w\n%s", err, tail(out, 20))
	}
	for _, n := range labNodes() {
		if err := emptyDir(filepath.Join(l.dir, n.name, "var", "lib", "etcd")); err != nil {
			return err
		}
	}
	l.progress(fmt.Sprintf("cluster deleted and etcd data wiped in %s", time.Since(start).Round(100*time.Millisecond)))
	return nil
}

// run runs argv with a timeout and returns its combined output.
func (l *labEnv) run(ctx context.Context, timeout time.Duration, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = l.o.Repo
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("run %s %s: %w", filepath.Base(name), strings.Join(args, " "), err)
	}
	return string(out), nil
}

// emptyDir removes everything inside dir (dir itself stays, if it exists).
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("wipe %s: %w", dir, err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("wipe %s: %w", dir, err)
		}
	}
	return nil
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
