package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/client"
)

// procCluster is three kcore-controller processes on loopback, so CPU and
// RSS are per replica and a replica can be killed for real.
type procCluster struct {
	bin  string
	root string
	reps []*procReplica
}

// procReplica is one kcore-controller process and what restarts it.
type procReplica struct {
	index   int
	api     string
	raft    string
	dataDir string
	pkiDir  string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

func startProcs(ctx context.Context, bin, root string, auth *authority, admin func([]string) (*client.Client, error)) (*procCluster, *client.Client, error) {
	p := &procCluster{bin: bin, root: root}
	for i := range 3 {
		pkiDir, err := auth.controllerDir(root, i)
		if err != nil {
			return nil, nil, err
		}
		api, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		raft, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		p.reps = append(p.reps, &procReplica{
			index: i, api: api, raft: raft, pkiDir: pkiDir,
			dataDir: filepath.Join(root, fmt.Sprintf("data-%d", i)),
			logPath: filepath.Join(root, fmt.Sprintf("controller-%d.log", i)),
		})
	}
	c, err := admin(p.addrs())
	if err != nil {
		return nil, nil, err
	}
	for i, r := range p.reps {
		var extra []string
		if i == 0 {
			extra = []string{"--bootstrap"}
		} else {
			extra = []string{"--join", p.reps[0].api}
		}
		if err := r.start(bin, extra); err != nil {
			p.close()
			return nil, nil, err
		}
		if i == 0 {
			if err := poll(ctx, readyTimeout, func() error { return p.healthy(ctx, c, 1) }); err != nil {
				p.close()
				return nil, nil, fmt.Errorf("bootstrap controller process: %w (log %s)", err, r.logPath)
			}
		}
	}
	if err := poll(ctx, readyTimeout, func() error { return p.healthy(ctx, c, 3) }); err != nil {
		p.close()
		return nil, nil, fmt.Errorf("form controller process cluster: %w", err)
	}
	return p, c, nil
}

// freeAddr returns a loopback address with a port free right now.
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

// start runs the replica's process; extra are --bootstrap or --join flags.
func (r *procReplica) start(bin string, extra []string) error {
	logf, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start controller %d: %w", r.index, err)
	}
	args := append([]string{
		"--pki-dir", r.pkiDir, "--data-dir", r.dataDir,
		"--listen", r.api, "--raft-listen", r.raft, "--log-level", "warn",
	}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start controller %d: %w", r.index, err)
	}
	r.cmd = cmd
	r.done = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(r.done)
	}()
	return nil
}

// running reports whether the replica's process is alive.
func (r *procReplica) running() bool {
	if r.cmd == nil {
		return false
	}
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (r *procReplica) kill() {
	if !r.running() {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// stop sends SIGTERM, then SIGKILL after 10 s.
func (r *procReplica) stop() {
	if !r.running() {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.kill()
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
