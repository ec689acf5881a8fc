package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// exitInfo is how a process ended (code -1: signal or unknown).
type exitInfo struct{ code int }

// keep runs p's process until p.stop (stop it), s.detach (leave it) or the
// restart policy says it is finished. adopted: p.status.PID is a live
// process from an earlier supervisor.
func (s *Supervisor) keep(p *proc, adopted bool) {
	defer close(p.done)
	backoff := s.cfg.BackoffInitial
	for {
		var (
			pid    int
			exitCh <-chan exitInfo
		)
		started := time.Now()
		if adopted {
			adopted = false
			s.mu.Lock()
			pid = p.status.PID
			ticks := p.startTicks
			s.mu.Unlock()
			exitCh = s.watch(pid, ticks)
		} else {
			var err error
			pid, exitCh, err = s.start(p)
			if err != nil {
				s.cfg.Log.Error("start unit", "unit", s.unitOf(p).Name, "err", err)
				s.setExited(p, -1, err.Error())
				if !s.backoffWait(p, &backoff, restartPolicy(s.unitOf(p)) != api.RestartNever) {
					return
				}
				continue
			}
		}
		select {
		case <-p.stop:
			s.terminate(pid, exitCh)
			s.mu.Lock()
			p.status.State, p.status.PID, p.status.Since = StateStopped, 0, time.Now()
			s.mu.Unlock()
			return
		case <-s.detach:
			return
		case ex := <-exitCh:
			syscall.Kill(-pid, syscall.SIGKILL)
			s.setExited(p, ex.code, "")
			if s.unitOf(p).Oneshot && ex.code == 0 {
				return
			}
			if time.Since(started) >= s.cfg.BackoffReset {
				backoff = s.cfg.BackoffInitial
			}
			if !s.backoffWait(p, &backoff, shouldRestart(restartPolicy(s.unitOf(p)), ex.code)) {
				return
			}
		}
	}
}

// unitOf reads p's unit under the lock (Ensure may replace it).
func (s *Supervisor) unitOf(p *proc) api.Unit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.unit
}

func shouldRestart(policy string, code int) bool {
	switch policy {
	case api.RestartAlways:
		return true
	case api.RestartOnFailure:
		return code != 0
	default:
		return false
	}
}

// backoffWait waits the current backoff (doubling it) before a restart; it
// returns false when the unit must not restart or was stopped meanwhile.
func (s *Supervisor) backoffWait(p *proc, backoff *time.Duration, restart bool) bool {
	if !restart {
		return false
	}
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(2**backoff, s.cfg.BackoffMax)
	select {
	case <-p.stop:
		s.mu.Lock()
		p.status.State, p.status.Since = StateStopped, time.Now()
		s.mu.Unlock()
		return false
	case <-s.detach:
		return false
	case <-t.C:
	}
	s.mu.Lock()
	p.status.Restarts++
	p.status.State, p.status.Since = StateStarting, time.Now()
	s.mu.Unlock()
	return true
}

// setExited records an exit (or a failure to start) and persists it.
func (s *Supervisor) setExited(p *proc, code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	p.status.PID, p.status.ExitCode, p.status.Message, p.status.Since, p.status.LastExit = 0, code, msg, now, now
	p.startTicks = 0
	p.status.State = StateFailed
	if code == 0 {
		p.status.State = StateExited
		if p.unit.Oneshot {
			p.doneHash = p.unit.InputHash
		}
	}
	s.persistLocked()
}

// start launches p's process in its own process group, output appended to its log.
func (s *Supervisor) start(p *proc) (int, <-chan exitInfo, error) {
	s.mu.Lock()
	u := p.unit
	s.mu.Unlock()
	if len(u.Argv) == 0 {
		return 0, nil, fmt.Errorf("start %s: %w: no argv", u.Name, ErrInvalidUnit)
	}
	bin, err := BinaryPath(u, s.cfg.BinDir, s.cfg.ReleasesDir)
	if err != nil {
		return 0, nil, err
	}
	logf, err := appendBeneath(s.cfg.Root, s.logRel(u.Name), 0o640)
	if err != nil {
		return 0, nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close()
	fmt.Fprintf(logf, "--- kcore: start %s (input %s) at %s\n", u.Name, u.InputHash, time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command(bin, u.Argv[1:]...)
	cmd.Args[0] = u.Argv[0]
	cmd.Env = s.env(u)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, nil, fmt.Errorf("start %s: %w", u.Argv[0], err)
	}
	pid := cmd.Process.Pid
	st, _ := readProcStat(s.cfg.ProcDir, pid)
	ch := make(chan exitInfo, 1)
	go func() {
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			code = -1
		}
		ch <- exitInfo{code: code}
	}()
	s.mu.Lock()
	p.status.State, p.status.PID, p.status.Since, p.status.Message = StateRunning, pid, time.Now(), ""
	p.startTicks = st.StartTicks
	s.persistLocked()
	s.mu.Unlock()
	return pid, ch, nil
}

// env is the agent's environment without KCORE_* entries, the unit's Env
// (sorted) and the supervisor's markers.
func (s *Supervisor) env(u api.Unit) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KCORE_") {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(u.Env))
	for k := range u.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+u.Env[k])
	}
	return append(env, EnvUnit+"="+u.Name, EnvInputHash+"="+u.InputHash, EnvRoot+"="+s.cfg.Root)
}

// watch polls an adopted process (not our child) until it is gone.
func (s *Supervisor) watch(pid int, ticks uint64) <-chan exitInfo {
	ch := make(chan exitInfo, 1)
	go func() {
		t := time.NewTicker(s.cfg.PollInterval)
		defer t.Stop()
		for alive(s.cfg.ProcDir, pid, ticks) {
			<-t.C
		}
		ch <- exitInfo{code: -1}
	}()
	return ch
}

// terminate stops a process group: SIGTERM, then SIGKILL after the grace
// period, then SIGKILL to whatever is left in the group.
func (s *Supervisor) terminate(pid int, exitCh <-chan exitInfo) {
	syscall.Kill(-pid, syscall.SIGTERM)
	t := time.NewTimer(s.cfg.StopGrace)
	defer t.Stop()
	select {
	case <-exitCh:
	case <-t.C:
		syscall.Kill(-pid, syscall.SIGKILL)
		<-exitCh
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}
