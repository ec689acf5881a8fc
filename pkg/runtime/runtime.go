package runtime

import (
	"context"
	"errors"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Unit states reported by Status.
const (
	// StateStarting: started, not yet confirmed running (systemd activating;
	// the supervisor between the end of a restart backoff and the new process).
	StateStarting = "starting"
	// StateRunning: the process is alive.
	StateRunning = "running"
	// StateExited: the process ended with exit code 0 (a finished oneshot).
	StateExited = "exited"
	// StateFailed: the process ended with a failure, or could not start.
	StateFailed = "failed"
	// StateStopped: stopped on request.
	StateStopped = "stopped"
)

// ErrUnknownUnit is returned for a unit the runtime does not manage.
var ErrUnknownUnit = errors.New("unknown unit")

// ErrInvalidUnit is returned for a unit that cannot be run (no name, no argv).
var ErrInvalidUnit = errors.New("invalid unit")

// UnitStatus is a unit's current state.
type UnitStatus struct {
	// Name of the unit.
	Name string `json:"name"`
	// State is one of the State constants.
	State string `json:"state"`
	// PID of the running process (0 when none).
	PID int `json:"pid,omitempty"`
	// Restarts counts restarts since the unit (with this InputHash) was started.
	Restarts int `json:"restarts,omitempty"`
	// ExitCode of the last exit (-1 when unknown or killed by a signal).
	ExitCode int `json:"exitCode,omitempty"`
	// Since is when the unit entered State.
	Since time.Time `json:"since,omitzero"`
	// LastExit is when the process last ended (zero when it has not, or the
	// runtime does not know); unlike Since it survives a restart, so a
	// watcher can tell when a unit that is running again had crashed.
	LastExit time.Time `json:"lastExit,omitzero"`
	// InputHash the unit currently runs with.
	InputHash string `json:"inputHash,omitempty"`
	// Oneshot is true for run-to-completion units.
	Oneshot bool `json:"oneshot,omitempty"`
	// Message explains a failure.
	Message string `json:"message,omitempty"`
}

// Ready reports whether units ordered After this one may start: a service
// is running, a oneshot has exited successfully.
func (s UnitStatus) Ready() bool {
	if s.Oneshot {
		return s.State == StateExited && s.ExitCode == 0
	}
	return s.State == StateRunning
}

// Runtime runs units.
type Runtime interface {
	// Ensure starts u when absent and restarts it when its InputHash changed;
	// it reports whether anything was (re)started. A oneshot runs once per
	// InputHash.
	Ensure(ctx context.Context, u api.Unit) (changed bool, err error)
	// Reload sends a running unit SIGHUP, so it reads the inputs its
	// ReloadHash covers again without a restart; a unit that does not run
	// is left alone (its next start reads them).
	Reload(ctx context.Context, name string) error
	// Stop stops the unit and forgets it; stopping an unknown unit is not an error.
	Stop(ctx context.Context, name string) error
	// Status reports a managed unit's state, or ErrUnknownUnit.
	Status(ctx context.Context, name string) (UnitStatus, error)
	// List names every unit the runtime manages, sorted.
	List(ctx context.Context) ([]string, error)
}

// Flusher is implemented by runtimes that batch changes (NixOS): the
// applier calls Flush once after ensuring and stopping units.
type Flusher interface {
	Flush(ctx context.Context) error
}

// restartPolicy returns u's restart policy with the default filled in:
// always for services, on-failure for oneshots.
func restartPolicy(u api.Unit) string {
	if u.Restart != "" {
		return u.Restart
	}
	if u.Oneshot {
		return api.RestartOnFailure
	}
	return api.RestartAlways
}

func validate(u api.Unit) error {
	if u.Name == "" || len(u.Argv) == 0 || u.Argv[0] == "" {
		return ErrInvalidUnit
	}
	for _, r := range u.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '@') {
			return ErrInvalidUnit
		}
	}
	return nil
}
