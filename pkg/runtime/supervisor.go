package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Environment entries the supervisor sets on every process it starts; a
// restarted supervisor finds its orphans by them.
const (
	EnvUnit      = "KCORE_UNIT"
	EnvInputHash = "KCORE_INPUT_HASH"
	EnvRoot      = "KCORE_SUPERVISOR_ROOT"
)

// SupervisorConfig configures a Supervisor. Zero durations take defaults.
type SupervisorConfig struct {
	// Root is the host root: logs go to <Root>/var/log/kcore/<unit>.log and
	// the state file to <Root>/var/lib/kcore/supervisor.json.
	Root string
	// BinDir is searched first for a bare argv[0], then $PATH.
	BinDir string
	// ReleasesDir holds one directory per release (<ReleasesDir>/v1.37.2/…);
	// a unit with a Version runs its binary from there (see BinaryPath).
	ReleasesDir string
	// Log receives the supervisor's own events.
	Log *slog.Logger
	// BackoffInitial is the first restart delay (default 1s); it doubles per
	// restart up to BackoffMax (default 30s).
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	// BackoffReset: a process that ran at least this long restarts after
	// BackoffInitial again (default 10s).
	BackoffReset time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL (default 10s).
	StopGrace time.Duration
	// PollInterval is how often an adopted process is checked (default 500ms).
	PollInterval time.Duration
	// ProcDir is procfs (default /proc).
	ProcDir string
}

func (c *SupervisorConfig) defaults() {
	if c.BackoffInitial <= 0 {
		c.BackoffInitial = time.Second
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 30 * time.Second
	}
	if c.BackoffMax < c.BackoffInitial {
		c.BackoffMax = c.BackoffInitial
	}
	if c.BackoffReset <= 0 {
		c.BackoffReset = 10 * time.Second
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 10 * time.Second
	}
	if c.PollInterval <= 0 {
		c.PollInterval = 500 * time.Millisecond
	}
	if c.ProcDir == "" {
		c.ProcDir = "/proc"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Supervisor is the built-in process supervisor. Processes run in their own
// process group and outlive the agent: Close detaches, and a new Supervisor
// on the same root adopts them (by the PIDs in its state file, and by the
// KCORE_* environment of orphaned group leaders), so an agent restart never
// runs a unit twice.
type Supervisor struct {
	cfg SupervisorConfig

	ops    sync.Mutex // serializes Ensure and Stop
	mu     sync.Mutex // guards units, detached and every proc's fields
	units  map[string]*proc
	detach chan struct{}
	closed bool
}

// proc is one supervised unit.
type proc struct {
	unit       api.Unit
	status     UnitStatus
	startTicks uint64
	doneHash   string
	needsStart bool
	stop       chan struct{}
	done       chan struct{}
}

// NewSupervisor loads the state file under cfg.Root and adopts the processes
// a previous supervisor left running.
func NewSupervisor(cfg SupervisorConfig) (*Supervisor, error) {
	cfg.defaults()
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("new supervisor: %w", err)
	}
	cfg.Root = root
	s := &Supervisor{
		cfg:    cfg,
		units:  map[string]*proc{},
		detach: make(chan struct{}),
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// LogPath is where the unit's output is appended.
func (s *Supervisor) LogPath(name string) string {
	return filepath.Join(s.cfg.Root, s.logRel(name))
}

// logRel is the unit's log file beneath the root.
func (s *Supervisor) logRel(name string) string { return logDirRel + "/" + name + ".log" }

// Ensure implements Runtime.
func (s *Supervisor) Ensure(ctx context.Context, u api.Unit) (bool, error) {
	if err := validate(u); err != nil {
		return false, fmt.Errorf("ensure unit %q: %w", u.Name, err)
	}
	s.ops.Lock()
	defer s.ops.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false, fmt.Errorf("ensure unit %s: supervisor closed", u.Name)
	}
	old := s.units[u.Name]
	if old != nil && old.unit.InputHash == u.InputHash && !old.needsStart {
		old.unit = u
		s.mu.Unlock()
		return false, nil
	}
	s.mu.Unlock()
	if old != nil {
		if err := s.halt(ctx, old); err != nil {
			return false, fmt.Errorf("ensure unit %s: %w", u.Name, err)
		}
	}
	p := &proc{unit: u, stop: make(chan struct{}), done: make(chan struct{})}
	p.status = UnitStatus{Name: u.Name, State: StateStarting, InputHash: u.InputHash, Oneshot: u.Oneshot, Since: time.Now()}
	s.mu.Lock()
	s.units[u.Name] = p
	s.mu.Unlock()
	s.cfg.Log.Info("start unit", "unit", u.Name, "inputHash", u.InputHash)
	go s.keep(p, false)
	return true, nil
}

// Reload implements Runtime: SIGHUP to the unit's main process only (it
// passes the signal on to the children it wants reloaded).
func (s *Supervisor) Reload(_ context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.units[name]
	if p == nil {
		return fmt.Errorf("reload unit %s: %w", name, ErrUnknownUnit)
	}
	if p.status.State != StateRunning || p.status.PID <= 0 || !alive(s.cfg.ProcDir, p.status.PID, p.startTicks) {
		return nil
	}
	if err := syscall.Kill(p.status.PID, syscall.SIGHUP); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("reload unit %s: %w", name, err)
	}
	s.cfg.Log.Info("reloaded unit", "unit", name, "pid", p.status.PID)
	return nil
}

// Stop implements Runtime.
func (s *Supervisor) Stop(ctx context.Context, name string) error {
	s.ops.Lock()
	defer s.ops.Unlock()
	s.mu.Lock()
	p := s.units[name]
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := s.halt(ctx, p); err != nil {
		return fmt.Errorf("stop unit %s: %w", name, err)
	}
	s.mu.Lock()
	delete(s.units, name)
	s.persistLocked()
	s.mu.Unlock()
	s.cfg.Log.Info("stopped unit", "unit", name)
	return nil
}

// halt ends p's keeper, which stops its process group.
func (s *Supervisor) halt(ctx context.Context, p *proc) error {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status implements Runtime.
func (s *Supervisor) Status(_ context.Context, name string) (UnitStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.units[name]
	if p == nil {
		return UnitStatus{}, fmt.Errorf("status of %s: %w", name, ErrUnknownUnit)
	}
	return p.status, nil
}

// List implements Runtime.
func (s *Supervisor) List(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.units))
	for n := range s.units {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Close stops supervising without stopping any process: they keep running
// and a new Supervisor on the same root adopts them. Use it when the agent
// exits; use Stop to end a unit.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.detach)
		s.persistLocked()
	}
	return nil
}
