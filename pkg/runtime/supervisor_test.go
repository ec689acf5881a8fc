package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
)

func newTestSupervisor(t *testing.T, root string) *Supervisor {
	t.Helper()
	s, err := NewSupervisor(SupervisorConfig{
		Root: root, BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond,
		StopGrace: 5 * time.Second, PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		names, _ := s.List(ctx)
		for _, n := range names {
			s.Stop(ctx, n)
		}
	})
	return s
}

func helperUnit(t *testing.T, name, mode, hash string, env map[string]string) api.Unit {
	e := map[string]string{helperEnv: mode}
	for k, v := range env {
		e[k] = v
	}
	return api.Unit{Name: name, Argv: helperArgv(t), Env: e, InputHash: hash}
}

func runningPID(t *testing.T, s *Supervisor, name string) int {
	t.Helper()
	var pid int
	waitFor(t, name+" running", func() bool {
		st, err := s.Status(context.Background(), name)
		pid = st.PID
		return err == nil && st.State == StateRunning && pid > 0
	})
	return pid
}

func TestSupervisorRestartsOnlyOnHashChange(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := newTestSupervisor(t, root)
	u := helperUnit(t, "kcore-etcd", "serve", "h1", nil)
	if changed, err := s.Ensure(ctx, u); err != nil || !changed {
		t.Fatalf("first ensure = %v, %v", changed, err)
	}
	pid1 := runningPID(t, s, u.Name)
	logHas := func(n int) func() bool {
		return func() bool {
			data, _ := os.ReadFile(filepath.Join(root, "var/log/kcore/kcore-etcd.log"))
			return strings.Count(string(data), "serving") == n
		}
	}
	waitFor(t, "first process serving", logHas(1))
	if changed, err := s.Ensure(ctx, u); err != nil || changed {
		t.Fatalf("unchanged ensure = %v, %v", changed, err)
	}
	if pid := runningPID(t, s, u.Name); pid != pid1 {
		t.Fatalf("unchanged hash restarted: pid %d -> %d", pid1, pid)
	}
	u.InputHash = "h2"
	if changed, err := s.Ensure(ctx, u); err != nil || !changed {
		t.Fatalf("changed ensure = %v, %v", changed, err)
	}
	pid2 := runningPID(t, s, u.Name)
	if pid2 == pid1 {
		t.Fatal("hash change kept the old process")
	}
	if alive("/proc", pid1, 0) {
		t.Fatalf("old process %d still alive", pid1)
	}
	waitFor(t, "second process serving", logHas(2))
}

// crashPolicies are the restart policies and whether each restarts the
// helper's "crash" mode (exit code 3).
var crashPolicies = []struct {
	name        string
	restart     string
	wantRestart bool
}{
	{name: "always restarts a crash", restart: api.RestartAlways, wantRestart: true},
	{name: "on-failure restarts a crash", restart: api.RestartOnFailure, wantRestart: true},
	{name: "no leaves it failed", restart: api.RestartNever},
}

func TestSupervisorRestartPolicies(t *testing.T) {
	for _, tt := range crashPolicies {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := newTestSupervisor(t, t.TempDir())
			u := helperUnit(t, "crasher", "crash", "h", nil)
			u.Restart = tt.restart
			if _, err := s.Ensure(ctx, u); err != nil {
				t.Fatal(err)
			}
			if tt.wantRestart {
				waitFor(t, "three restarts", func() bool {
					st, _ := s.Status(ctx, u.Name)
					return st.Restarts >= 3
				})
				return
			}
			waitFor(t, "failed state", func() bool {
				st, _ := s.Status(ctx, u.Name)
				return st.State == StateFailed && st.ExitCode == 3
			})
			if st, _ := s.Status(ctx, u.Name); st.LastExit.IsZero() {
				t.Fatal("a crashed unit has no LastExit")
			}
			if changed, _ := s.Ensure(ctx, u); changed {
				t.Fatal("ensure restarted a finished restart=no unit with the same hash")
			}
			if st, _ := s.Status(ctx, u.Name); st.Restarts != 0 {
				t.Fatalf("restarts = %d", st.Restarts)
			}
		})
	}
}

func TestSupervisorStopKillsProcessGroup(t *testing.T) {
	ctx := context.Background()
	s := newTestSupervisor(t, t.TempDir())
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	u := helperUnit(t, "grouped", "group", "h", map[string]string{"KCORE_TEST_PIDFILE": pidFile})
	if _, err := s.Ensure(ctx, u); err != nil {
		t.Fatal(err)
	}
	leader := runningPID(t, s, u.Name)
	var child int
	waitFor(t, "child pid file", func() bool {
		data, err := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(string(data))
		return err == nil && child > 0
	})
	if err := s.Stop(ctx, u.Name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "group gone", func() bool { return !alive("/proc", leader, 0) && !alive("/proc", child, 0) })
	if _, err := s.Status(ctx, u.Name); err == nil {
		t.Fatal("stopped unit still listed")
	}
}

func TestSupervisorStopEscalatesToSIGKILL(t *testing.T) {
	ctx := context.Background()
	s, err := NewSupervisor(SupervisorConfig{Root: t.TempDir(), StopGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	u := helperUnit(t, "stubborn", "ignore-term", "h", map[string]string{"KCORE_TEST_PIDFILE": ready})
	if _, err := s.Ensure(ctx, u); err != nil {
		t.Fatal(err)
	}
	pid := runningPID(t, s, u.Name)
	waitFor(t, "SIGTERM ignored", func() bool { _, err := os.Stat(ready); return err == nil })
	if err := s.Stop(ctx, u.Name); err != nil {
		t.Fatal(err)
	}
	if alive("/proc", pid, 0) {
		t.Fatalf("process %d survived stop", pid)
	}
}

func TestSupervisorOneshotRunsOncePerHash(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := newTestSupervisor(t, root)
	count := filepath.Join(t.TempDir(), "count")
	u := helperUnit(t, "kcore-kubernetes-cilium", "oneshot", "h1", map[string]string{"KCORE_TEST_COUNT": count})
	u.Oneshot = true
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "ran")
	}
	exited := func() bool {
		st, _ := s.Status(ctx, u.Name)
		return st.Ready()
	}
	if _, err := s.Ensure(ctx, u); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "oneshot done", exited)
	if changed, _ := s.Ensure(ctx, u); changed || runs() != 1 {
		t.Fatalf("same hash: changed=%v runs=%d", changed, runs())
	}
	s.Close()
	s2 := newTestSupervisor(t, root)
	if changed, _ := s2.Ensure(ctx, u); changed {
		t.Fatal("a restarted supervisor re-ran a finished oneshot")
	}
	u.InputHash = "h2"
	if changed, _ := s2.Ensure(ctx, u); !changed {
		t.Fatal("new hash did not re-run")
	}
	waitFor(t, "second run", func() bool { st, _ := s2.Status(ctx, u.Name); return st.Ready() && runs() == 2 })
}

// unitProcesses counts group leaders carrying this root's markers for unit.
func unitProcesses(root, unit string) int {
	n := 0
	for _, pid := range listPIDs("/proc") {
		st, err := readProcStat("/proc", pid)
		if err != nil || st.PGID != pid || st.State == 'Z' {
			continue
		}
		env := procEnv("/proc", pid)
		if env[EnvRoot] == root && env[EnvUnit] == unit {
			n++
		}
	}
	return n
}

func TestSupervisorRestartAdoptsProcesses(t *testing.T) {
	tests := []struct {
		name      string
		lostState bool
	}{
		{name: "recorded in the state file"},
		{name: "agent died before recording the start", lostState: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			s1 := newTestSupervisor(t, root)
			u := helperUnit(t, "kcore-etcd", "serve", "h1", nil)
			if _, err := s1.Ensure(ctx, u); err != nil {
				t.Fatal(err)
			}
			pid := runningPID(t, s1, u.Name)
			s1.Close()
			if tt.lostState {
				if err := os.Remove(filepath.Join(root, "var/lib/kcore/supervisor.json")); err != nil {
					t.Fatal(err)
				}
			}
			s2 := newTestSupervisor(t, root)
			if got := runningPID(t, s2, u.Name); got != pid {
				t.Fatalf("adopted pid %d, want %d", got, pid)
			}
			if changed, err := s2.Ensure(ctx, u); err != nil || changed {
				t.Fatalf("ensure after adoption = %v, %v", changed, err)
			}
			if n := unitProcesses(root, u.Name); n != 1 {
				t.Fatalf("%d processes for the unit, want 1", n)
			}
			// The inputs changed while the agent was down: the adopted process is replaced.
			u.InputHash = "h2"
			if changed, err := s2.Ensure(ctx, u); err != nil || !changed {
				t.Fatalf("ensure with a new hash = %v, %v", changed, err)
			}
			waitFor(t, "adopted process replaced", func() bool { return !alive("/proc", pid, 0) })
			if got := runningPID(t, s2, u.Name); got == pid {
				t.Fatal("new hash kept the adopted process")
			}
			if n := unitProcesses(root, u.Name); n != 1 {
				t.Fatalf("%d processes for the unit after the restart, want 1", n)
			}
		})
	}
}

// A unit that ended while its supervisor waited out the back-off before
// restarting it (a power cut kills the unit's process, then the agent) is
// started by the next supervisor's Ensure; one its restart policy had
// finished is left as it was.
func TestSupervisorRestartsAUnitLeftInItsBackoff(t *testing.T) {
	for _, tt := range crashPolicies {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			s1, err := NewSupervisor(SupervisorConfig{
				Root: root, BackoffInitial: time.Hour, BackoffMax: time.Hour,
				StopGrace: 5 * time.Second, PollInterval: 10 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			u := helperUnit(t, "kcore-kube-scheduler", "crash", "h1", nil)
			u.Restart = tt.restart
			if _, err := s1.Ensure(ctx, u); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the crash recorded", func() bool {
				st, _ := s1.Status(ctx, u.Name)
				return st.State == StateFailed && st.ExitCode == 3
			})
			s1.Close()
			s2 := newTestSupervisor(t, root)
			if st, _ := s2.Status(ctx, u.Name); st.State != StateFailed || st.ExitCode != 3 {
				t.Fatalf("status after load = %s exit code %d, want failed exit code 3", st.State, st.ExitCode)
			}
			changed, err := s2.Ensure(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantRestart {
				t.Fatalf("ensure with the same hash after the supervisor died in the back-off: started = %v, want %v", changed, tt.wantRestart)
			}
			if tt.wantRestart {
				waitFor(t, "the unit run again", func() bool {
					st, _ := s2.Status(ctx, u.Name)
					return !st.LastExit.IsZero()
				})
			}
		})
	}
}

func TestSupervisorAdoptedCrashRestarts(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s1 := newTestSupervisor(t, root)
	u := helperUnit(t, "kcore-apiserver", "serve", "h1", nil)
	if _, err := s1.Ensure(ctx, u); err != nil {
		t.Fatal(err)
	}
	pid := runningPID(t, s1, u.Name)
	s1.Close()
	s2 := newTestSupervisor(t, root)
	runningPID(t, s2, u.Name)
	if err := syscallKill(pid); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "restart after the adopted process died", func() bool {
		st, _ := s2.Status(ctx, u.Name)
		return st.State == StateRunning && st.PID != pid && st.PID > 0
	})
}

func TestParseProcStat(t *testing.T) {
	st, err := parseProcStat([]byte("42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 0 0"))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != 'S' || st.PPID != 1 || st.PGID != 42 || st.StartTicks != 12345 {
		t.Fatalf("parsed %+v", st)
	}
	if _, err := parseProcStat([]byte("garbage")); err == nil {
		t.Fatal("garbage parsed")
	}
}
