package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// supervisorState is the supervisor's state file.
type supervisorState struct {
	Units map[string]unitRecord `json:"units"`
}

// unitRecord is one unit in the state file.
type unitRecord struct {
	Unit       api.Unit `json:"unit"`
	State      string   `json:"state"`
	PID        int      `json:"pid,omitempty"`
	StartTicks uint64   `json:"startTicks,omitempty"`
	ExitCode   int      `json:"exitCode,omitempty"`
	Restarts   int      `json:"restarts,omitempty"`
	DoneHash   string   `json:"doneHash,omitempty"`
}

// persistLocked writes the state file; s.mu must be held. A failure is
// logged: the next change writes it again.
func (s *Supervisor) persistLocked() {
	st := supervisorState{Units: map[string]unitRecord{}}
	for name, p := range s.units {
		st.Units[name] = unitRecord{
			Unit: p.unit, State: p.status.State, PID: p.status.PID, StartTicks: p.startTicks,
			ExitCode: p.status.ExitCode, Restarts: p.status.Restarts, DoneHash: p.doneHash,
		}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err == nil {
		err = writeBeneath(s.cfg.Root, supervisorStateRel, append(data, '\n'), 0o600)
	}
	if err != nil {
		s.cfg.Log.Error("persist supervisor state", "err", err)
	}
}

// load reads the state file, adopts live processes and finds orphans.
func (s *Supervisor) load() error {
	data, err := readBeneath(s.cfg.Root, supervisorStateRel)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("load supervisor state: %w", err)
	}
	var st supervisorState
	if len(data) > 0 {
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("load supervisor state %s: %w", supervisorStateRel, err)
		}
	}
	now := time.Now()
	var adopt []*proc
	for name, rec := range st.Units {
		p := &proc{unit: rec.Unit, doneHash: rec.DoneHash, stop: make(chan struct{}), done: make(chan struct{})}
		p.status = UnitStatus{Name: name, State: rec.State, ExitCode: rec.ExitCode, Restarts: rec.Restarts,
			InputHash: rec.Unit.InputHash, Oneshot: rec.Unit.Oneshot, Since: now}
		switch {
		case rec.PID > 0 && alive(s.cfg.ProcDir, rec.PID, rec.StartTicks):
			p.status.State, p.status.PID, p.startTicks = StateRunning, rec.PID, rec.StartTicks
			adopt = append(adopt, p)
		case rec.Unit.Oneshot && rec.DoneHash == rec.Unit.InputHash:
			p.status.State, p.status.ExitCode = StateExited, 0
			close(p.done)
		case rec.State == StateRunning || rec.State == StateStarting:
			// It died while no supervisor watched: the next Ensure starts it.
			p.status.State, p.status.ExitCode, p.needsStart = StateFailed, -1, true
			close(p.done)
		case (rec.State == StateFailed || rec.State == StateExited) && shouldRestart(restartPolicy(rec.Unit), rec.ExitCode):
			// It ended and its restart policy restarts it, but the supervisor
			// died during the back-off (a power cut kills the unit's process
			// and then the agent): the next Ensure starts it.
			p.needsStart = true
			close(p.done)
		default:
			// It had finished for good (restart policy); Ensure leaves it.
			close(p.done)
		}
		s.units[name] = p
	}
	adopt = append(adopt, s.adoptOrphans()...)
	s.persistLocked()
	for _, p := range adopt {
		s.cfg.Log.Info("adopted unit", "unit", p.unit.Name, "pid", p.status.PID)
		go s.keep(p, true)
	}
	return nil
}

// adoptOrphans scans procfs for process-group leaders this root's
// supervisor started but never recorded (the agent died right after a
// start). One is adopted per unit that has no live process; any other is a
// duplicate and is killed.
func (s *Supervisor) adoptOrphans() []*proc {
	var adopted []*proc
	for _, pid := range listPIDs(s.cfg.ProcDir) {
		st, err := readProcStat(s.cfg.ProcDir, pid)
		if err != nil || st.PGID != pid || st.State == 'Z' {
			continue
		}
		env := procEnv(s.cfg.ProcDir, pid)
		name := env[EnvUnit]
		if env[EnvRoot] != s.cfg.Root || name == "" || s.descendsFromUnit(st.PPID) {
			continue
		}
		p := s.units[name]
		switch {
		case p != nil && p.status.PID == pid:
			continue
		case p == nil || (p.status.PID == 0 && p.unit.InputHash == env[EnvInputHash]):
			if p == nil {
				p = &proc{unit: api.Unit{Name: name, InputHash: env[EnvInputHash]}, stop: make(chan struct{})}
			}
			p.done = make(chan struct{})
			p.needsStart = false
			p.startTicks = st.StartTicks
			p.status = UnitStatus{Name: name, State: StateRunning, PID: pid, InputHash: env[EnvInputHash],
				Oneshot: p.unit.Oneshot, Since: time.Now()}
			s.units[name] = p
			adopted = append(adopted, p)
		default:
			s.cfg.Log.Warn("kill duplicate unit process", "unit", name, "pid", pid)
			syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	return adopted
}

// descendsFromUnit reports whether ppid belongs to a tracked unit's process
// group (a unit's own child that made itself a group leader is not an orphan).
func (s *Supervisor) descendsFromUnit(ppid int) bool {
	if ppid <= 1 {
		return false
	}
	st, err := readProcStat(s.cfg.ProcDir, ppid)
	if err != nil {
		return false
	}
	for _, p := range s.units {
		if p.status.PID > 0 && st.PGID == p.status.PID {
			return true
		}
	}
	return false
}
