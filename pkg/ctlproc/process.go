package ctlproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/controller"
)

// Bounds of one process's life.
const (
	// StartTimeout bounds how long Start waits for a replica to say where
	// it listens.
	StartTimeout = 30 * time.Second
	// KillTimeout bounds how long Kill waits for a SIGKILLed process to be
	// reaped.
	KillTimeout = 10 * time.Second
	// anyLoopbackPort lets the replica pick a free port itself.
	anyLoopbackPort = "127.0.0.1:0"
)

// ErrExited is returned by Start when the process exits before it listens
// (a bad flag, or a fixed port another process holds).
var ErrExited = errors.New("controller process exited before it listened")

// Spec says how to run one kcore-controller replica.
type Spec struct {
	// Bin is the kcore-controller binary.
	Bin string
	// ID is the raft id (--id); empty lets the replica use its API address.
	ID string
	// PKIDir and DataDir are --pki-dir and --data-dir.
	PKIDir, DataDir string
	// LogPath receives the process's stdout and stderr (appended).
	LogPath string
	// API and Raft are the listen addresses; empty means 127.0.0.1:0, the
	// replica picks the port and Start reads it back. A restart passes the
	// addresses the first start bound.
	API, Raft string
	// Bootstrap and Join are --bootstrap and --join; a restart needs
	// neither.
	Bootstrap bool
	Join      []string
	// LogLevel is --log-level; empty means info, which Start needs to see
	// the replica's addresses.
	LogLevel string
	// Args are further flags.
	Args []string
	// Netns, when set, runs the process in that named network namespace
	// (`ip netns exec NAME kcore-controller …`, which execs in place, so
	// signals reach the controller itself); API and Raft must then be
	// addresses of that namespace.
	Netns string
}

// command returns the argv of s: the binary and its flags, behind
// `ip netns exec` when s names a namespace.
func (s Spec) command() []string {
	argv := append([]string{s.Bin}, s.args()...)
	if s.Netns != "" {
		argv = append([]string{"ip", "netns", "exec", s.Netns}, argv...)
	}
	return argv
}

// args returns the command line of s, without the binary.
func (s Spec) args() []string {
	api, raft, level := s.API, s.Raft, s.LogLevel
	if api == "" {
		api = anyLoopbackPort
	}
	if raft == "" {
		raft = anyLoopbackPort
	}
	if level == "" {
		level = "info"
	}
	a := []string{"--pki-dir", s.PKIDir, "--data-dir", s.DataDir, "--listen", api, "--raft-listen", raft, "--log-level", level}
	if s.ID != "" {
		a = append(a, "--id", s.ID)
	}
	if s.Bootstrap {
		a = append(a, "--bootstrap")
	}
	for _, j := range s.Join {
		a = append(a, "--join", j)
	}
	return append(a, s.Args...)
}

// Process is one running (or exited) kcore-controller process.
type Process struct {
	api, raft string
	cmd       *exec.Cmd
	done      chan struct{}
	waitErr   error
}

// Start runs the replica s describes and returns once it listens, with the
// addresses it bound. The process outlives ctx, which bounds only the
// start; end it with Kill or Stop.
func Start(ctx context.Context, s Spec) (*Process, error) {
	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("start controller: %w", err)
	}
	w := newStartWatch(logf)
	argv := s.command()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start controller: %w", err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case a := <-w.addrs:
		p.api, p.raft = a.api, a.raft
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("start controller: %w (%v; log %s)", ErrExited, p.waitErr, s.LogPath)
	case <-ctx.Done():
		p.Kill()
		return nil, fmt.Errorf("start controller: %w (log %s)", ctx.Err(), s.LogPath)
	case <-timer.C:
		p.Kill()
		return nil, fmt.Errorf("start controller: no %q line after %s (log %s)", controller.LogStarted, StartTimeout, s.LogPath)
	}
}

// API is the API address the replica bound.
func (p *Process) API() string { return p.api }

// Raft is the raft address the replica advertises.
func (p *Process) Raft() string { return p.raft }

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Signal sends sig (e.g. SIGSTOP, SIGCONT) to the process.
func (p *Process) Signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("signal controller %d: %w", p.PID(), os.ErrProcessDone)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal controller %d: %w", p.PID(), err)
	}
	return nil
}

// Kill sends SIGKILL and waits, at most KillTimeout, for the process to be
// gone.
func (p *Process) Kill() error {
	if !p.Running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	if !p.exited(KillTimeout) {
		return fmt.Errorf("kill controller %d: still running after %s", p.PID(), KillTimeout)
	}
	return nil
}

// Stop sends SIGTERM, then SIGKILL when the process is still running after
// grace.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if p.exited(grace) {
		return nil
	}
	return p.Kill()
}

// exited waits at most d for the process to exit and reports whether it
// did.
func (p *Process) exited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}
