package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyBench is figure 6: kctl kubernetes apply --wait of the lab cluster,
// from the command to phase ready, against the floor: the same etcd and
// kube-apiserver processes (the argv the agents ran, the certificates they
// wrote) started by hand in the same namespaces with empty data dirs.
type readyBench struct {
	l *labEnv
	// floorUnits are per node the etcd and kube-apiserver argv, captured
	// after the first apply and moved to the floor's copy of the files.
	floorUnits map[string][2][]string
	// ours, floorAll and floorFirst are seconds per run.
	ours, floorAll, floorFirst []float64
	// steps are, per readySteps event, the seconds from the command to
	// the latest node's event, one per run.
	steps map[string][]float64
	// degraded counts applies whose --wait stopped before ready.
	degraded int
}

// oursOnce times one apply --wait; the first run also captures the argv
// and files the floor reuses.
func (r *readyBench) oursOnce(ctx context.Context, run int) error {
	l := r.l
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	// As scripts/lab.sh: wait for a plan without blocking issues, so the
	// agents' facts no longer show the floor's ports in use.
	if err := pollUntil(ctx, 2*time.Minute, 500*time.Millisecond, "a plan without blocking issues", func() error {
		if _, err := l.kctl(ctx, 30*time.Second, "kubernetes", "plan", "-f", filepath.Join(l.o.Repo, labManifest)); err != nil {
			return fmt.Errorf("%w: %w", errNotYet, err)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("time to ready: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(l.o.BinDir, "kctl"), "kubernetes", "apply", "--yes", "--wait", "--timeout", "5m",
		"-f", filepath.Join(l.o.Repo, labManifest))
	cmd.Env = append(os.Environ(), "KCTL_CONFIG="+filepath.Join(l.dir, "kctl.yaml"))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var timeline, output []string
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			output = append(output, line)
			if strings.HasPrefix(line, "cluster ") || strings.Contains(line, "): ") {
				timeline = append(timeline, fmt.Sprintf("%6.2fs %s", time.Since(start).Seconds(), strings.TrimSpace(line)))
			}
		}
	})
	err := cmd.Run()
	pw.Close()
	wg.Wait()
	took := time.Since(start)
	if err != nil && !slices.ContainsFunc(output, func(s string) bool { return strings.Contains(s, "stored, phase") }) {
		return fmt.Errorf("time to ready: kctl kubernetes apply: %w\n%s", err, tail(strings.Join(output, "\n"), 20))
	}
	if err != nil {
		// --wait stops at the first degraded phase; the agents retry, so
		// follow the cluster as scripts/lab.sh does, and count it.
		r.degraded++
		l.progress(fmt.Sprintf("time to ready run %d: apply --wait stopped before ready (%v); following kctl kubernetes health", run+1, err))
		if err := pollUntil(ctx, 5*time.Minute, 500*time.Millisecond, "cluster ready", func() error {
			if _, err := l.kctl(ctx, 30*time.Second, "kubernetes", "health", labCluster); err != nil {
				return fmt.Errorf("%w: %w", errNotYet, err)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("time to ready: %w\n%s", err, strings.Join(timeline, "\n"))
		}
		took = time.Since(start)
	}
	r.ours = append(r.ours, took.Seconds())
	l.progress(fmt.Sprintf("time to ready run %d: apply --wait → ready in %s\n  %s", run+1, took.Round(10*time.Millisecond), strings.Join(timeline, "\n  ")))
	latest := r.profileRun(start)
	if r.steps == nil {
		r.steps = map[string][]float64{}
	}
	for _, st := range readySteps() {
		if d, ok := latest[st.event]; ok {
			r.steps[st.event] = append(r.steps[st.event], d.Seconds())
		}
	}
	if r.floorUnits == nil {
		return r.capture()
	}
	return nil
}

// capture copies every node's /etc/kubernetes (certificates, kubeconfigs)
// to the floor's directory and keeps the etcd and kube-apiserver argv the
// agents ran, with the node root moved to that copy.
func (r *readyBench) capture() error {
	l := r.l
	r.floorUnits = map[string][2][]string{}
	for _, n := range labNodes() {
		us, err := l.units(n.name)
		if err != nil {
			return err
		}
		root := filepath.Join(l.dir, n.name)
		froot := filepath.Join(l.floor, n.name)
		if err := os.RemoveAll(froot); err != nil {
			return fmt.Errorf("capture floor of %s: %w", n.name, err)
		}
		if err := os.CopyFS(filepath.Join(froot, "etc", "kubernetes"), os.DirFS(filepath.Join(root, "etc", "kubernetes"))); err != nil {
			return fmt.Errorf("capture floor of %s: %w", n.name, err)
		}
		var argvs [2][]string
		for i, name := range []string{unitEtcd, unitAPIServer} {
			u, ok := us[name]
			if !ok || len(u.Unit.Argv) == 0 {
				return fmt.Errorf("capture floor of %s: no unit %s", n.name, name)
			}
			argvs[i] = floorArgv(u.Unit.Argv, root, froot)
		}
		r.floorUnits[n.name] = argvs
	}
	return nil
}

// floorArgv is argv with the node root moved to froot and etcd's
// bootstrap state set to new (the floor always starts from empty data).
func floorArgv(argv []string, root, froot string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		a = strings.ReplaceAll(a, root+"/", froot+"/")
		if strings.HasPrefix(a, "--initial-cluster-state=") {
			a = "--initial-cluster-state=new"
		}
		out[i] = a
	}
	return out
}

// floorProc is one hand-started process.
type floorProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// floorOnce starts every node's etcd and kube-apiserver at once, in the
// nodes' namespaces with empty etcd data, and times /readyz on each node's
// address; then it stops them and wipes their data.
func (r *readyBench) floorOnce(ctx context.Context, run int) error {
	l := r.l
	nodes := labNodes()
	for _, n := range nodes {
		if err := os.RemoveAll(filepath.Join(l.floor, n.name, "var")); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
	}
	client, err := readyzClient(filepath.Join(l.floor, nodes[0].name, "etc", "kubernetes", "pki", "ca.crt"), time.Second)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	var procs []*floorProc
	defer func() {
		stopFloor(procs)
		for _, n := range nodes {
			os.RemoveAll(filepath.Join(l.floor, n.name, "var"))
		}
	}()
	start := time.Now()
	for i, unit := range []string{unitEtcd, unitAPIServer} {
		for _, n := range nodes {
			p, err := r.startFloor(n.name, unit, r.floorUnits[n.name][i])
			if err != nil {
				return err
			}
			procs = append(procs, p)
		}
	}
	ready := make([]time.Duration, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			errs[i] = pollUntil(ctx, 2*time.Minute, 50*time.Millisecond, "/readyz on "+n.addr, func() error { return readyz(ctx, client, n.addr) })
			ready[i] = time.Since(start)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("floor run %d: %w (logs in %s)", run+1, err, l.floor)
		}
	}
	first, all := ready[0], ready[0]
	for _, d := range ready[1:] {
		first, all = min(first, d), max(all, d)
	}
	r.floorAll = append(r.floorAll, all.Seconds())
	r.floorFirst = append(r.floorFirst, first.Seconds())
	l.progress(fmt.Sprintf("floor run %d: /readyz on every node after %s (first %s; per node %v)", run+1,
		all.Round(10*time.Millisecond), first.Round(10*time.Millisecond), roundAll(ready)))
	return nil
}

// startFloor starts argv in node n's network namespace (nsenter, as the
// lab runs its agents), logging to the floor directory.
func (r *readyBench) startFloor(n, unit string, argv []string) (*floorProc, error) {
	l := r.l
	bin := argv[0]
	if !filepath.IsAbs(bin) {
		bin = filepath.Join(l.k8sBin, bin)
	}
	if err := os.MkdirAll(filepath.Join(l.floor, n, "var", "log"), 0o755); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	logf, err := os.Create(filepath.Join(l.floor, n, "var", "log", unit+".log"))
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command("nsenter", append([]string{"--net=/run/netns/kcore-lab-" + n, bin}, argv[1:]...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("floor: start %s on %s: %w", unit, n, err)
	}
	p := &floorProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stopFloor SIGKILLs every process group and waits for them: the floor's
// processes hold nothing worth a graceful stop, and an API server whose
// etcd went first can take long to drain.
func stopFloor(procs []*floorProc) {
	for _, p := range procs {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	for _, p := range procs {
		<-p.done
	}
}

// figures are figure 6's rows.
func (r *readyBench) figures() []Figure {
	f := measured("6", "time to ready: kctl kubernetes apply --wait → phase ready (3 control planes)", "s", r.ours)
	f = f.withReference("floor: same etcd + kube-apiserver by hand, /readyz on all 3 nodes", Median(r.floorAll))
	f = f.withTarget("ratio <= 1.3", f.Ratio != nil && *f.Ratio <= 1.3)
	f = f.withNote("lab (scripts/lab.sh, LAB_APPLY=0); cluster deleted and etcd data wiped between runs; the floor starts the 3 etcd and 3 kube-apiserver processes at once with the argv and certificates the agents used")
	if r.degraded > 0 {
		f = f.withNote(fmt.Sprintf("%d of %d applies stopped degraded and were followed with kctl kubernetes health", r.degraded, len(r.ours)))
	}
	out := []Figure{f,
		measured("6", "  floor: /readyz on all 3 nodes", "s", r.floorAll),
		measured("6", "  floor: /readyz on the first node", "s", r.floorFirst)}
	for _, st := range readySteps() {
		if xs := r.steps[st.event]; len(xs) > 0 {
			out = append(out, measured("6", "  ours: command → "+st.what, "s", xs).withNote(
				"diagnostic: from the agents' logs (start unit / run task), the latest of the 3 nodes"))
		}
	}
	return out
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}
