package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
)

// procCluster is three kcore-controller processes on loopback, so CPU and
// RSS are per replica and a replica can be killed for real.
type procCluster struct {
	reps []*procReplica
}

// procReplica is one kcore-controller process and what restarts it.
type procReplica struct {
	index int
	// api is the address the first start bound; restarts reuse it.
	api  string
	spec ctlproc.Spec
	proc *ctlproc.Process
}

// startProcs starts the three processes (each on ports it picks itself,
// with the flags extra beside the bench's own), waits for them to form a
// cluster and returns it with a cluster-admin client for every replica.
func startProcs(ctx context.Context, bin, root string, auth *ctlproc.Authority, extra ...string) (*procCluster, *client.Client, error) {
	p := &procCluster{}
	for i := range 3 {
		pkiDir, err := controllerDir(auth, root, i)
		if err != nil {
			p.close()
			return nil, nil, err
		}
		r := &procReplica{index: i, spec: ctlproc.Spec{
			Bin: bin, PKIDir: pkiDir,
			DataDir:   filepath.Join(root, fmt.Sprintf("data-%d", i)),
			LogPath:   filepath.Join(root, fmt.Sprintf("controller-%d.log", i)),
			Bootstrap: i == 0,
			Args:      append([]string{"--max-conns", strconv.Itoa(benchConns), "--max-conns-per-source", strconv.Itoa(benchConns)}, extra...),
		}}
		if i > 0 {
			r.spec.Join = []string{p.reps[0].api}
		}
		if err := r.start(ctx); err != nil {
			p.close()
			return nil, nil, err
		}
		p.reps = append(p.reps, r)
	}
	c, err := auth.NewClient(p.addrs(), apiv1.RoleClusterAdmin, "bench-admin")
	if err != nil {
		p.close()
		return nil, nil, err
	}
	if err := poll(ctx, readyTimeout, func() error { return p.healthy(ctx, c, 3) }); err != nil {
		c.Close()
		p.close()
		return nil, nil, fmt.Errorf("form controller process cluster: %w", err)
	}
	return p, c, nil
}

// controllerDir writes the PKI dir of controller i under root and returns
// its path.
func controllerDir(auth *ctlproc.Authority, root string, i int) (string, error) {
	dir := filepath.Join(root, fmt.Sprintf("pki-%d", i))
	return dir, auth.ControllerDir(dir, fmt.Sprintf("controller-%d", i))
}

// freeAddr returns a loopback address with a port free right now, for
// etcd, which cannot report a port it picked itself.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (p *procCluster) addrs() []string {
	out := make([]string, len(p.reps))
	for i, r := range p.reps {
		out[i] = r.api
	}
	return out
}

// start runs the replica's process: the first time on ports it picks, then
// on the same addresses from the same data dir, with neither --bootstrap
// nor --join.
func (r *procReplica) start(ctx context.Context) error {
	proc, err := ctlproc.Start(ctx, r.spec)
	if err != nil {
		return fmt.Errorf("start controller %d: %w", r.index, err)
	}
	r.proc, r.api = proc, proc.API()
	r.spec.API, r.spec.Raft = proc.API(), proc.Raft()
	r.spec.Bootstrap, r.spec.Join = false, nil
	return nil
}

// running reports whether the replica's process is alive.
func (r *procReplica) running() bool {
	return r.proc != nil && r.proc.Running()
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *procReplica) kill() error {
	if r.proc == nil {
		return nil
	}
	return r.proc.Kill()
}

// stop sends SIGTERM, then SIGKILL after 10 s.
func (r *procReplica) stop() {
	if r.proc != nil {
		_ = r.proc.Stop(10 * time.Second)
	}
}

func (p *procCluster) close() {
	for _, r := range p.reps {
		r.stop()
	}
}

// healthy reports nil once every running replica knows a leader and the
// leader counts want members.
func (p *procCluster) healthy(ctx context.Context, c *client.Client, want int) error {
	seen := 0
	for _, r := range p.reps {
		if !r.running() {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err := c.HealthOf(hctx, r.api)
		cancel()
		if err != nil {
			return fmt.Errorf("health of replica %d: %w", r.index, err)
		}
		if h.Leader == "" {
			return fmt.Errorf("replica %d knows no leader", r.index)
		}
		if h.Role == "leader" && len(h.Peers) != want {
			return fmt.Errorf("leader has %d members, want %d", len(h.Peers), want)
		}
		seen++
	}
	if seen == 0 {
		return errors.New("no replica running")
	}
	return nil
}

// leader returns the running replica that says it is leader.
func (p *procCluster) leader(ctx context.Context, c *client.Client) (*procReplica, uint64, error) {
	for _, r := range p.reps {
		if !r.running() {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		h, err := c.HealthOf(hctx, r.api)
		cancel()
		if err == nil && h.Role == "leader" {
			return r, h.LastIndex, nil
		}
	}
	return nil, 0, errors.New("no leader among the controller processes")
}

// waitLeader returns the leader, waiting out an election:
// under a heavy load on this machine a replica may miss heartbeats and
// start one.
func (p *procCluster) waitLeader(ctx context.Context, c *client.Client) (*procReplica, error) {
	var l *procReplica
	err := poll(ctx, readyTimeout, func() error {
		var err error
		l, _, err = p.leader(ctx, c)
		return err
	})
	return l, err
}

// procUsage is a process's CPU time and peak RSS.
type procUsage struct {
	cpu   time.Duration
	hwmKB int64
}

// clockTick is USER_HZ, 100 on every Linux this runs on.
const clockTick = 100

// readUsage reads /proc/PID/stat (utime+stime) and /proc/PID/status (VmHWM).
func readUsage(pid int) (procUsage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procUsage{}, fmt.Errorf("read usage: %w", err)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return procUsage{}, fmt.Errorf("read usage: short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(fields[11], 10, 64)
	st, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procUsage{}, fmt.Errorf("read usage: %w", err)
	}
	u := procUsage{cpu: time.Duration(ut+st) * time.Second / clockTick}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procUsage{}, fmt.Errorf("read usage: %w", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				u.hwmKB, _ = strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return u, nil
}
