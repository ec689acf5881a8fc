package rollout

import (
	"errors"
	"fmt"

	"kcore.dev/kcore/pkg/api"
)

// Update phases (api.UpdateStatus.Phase).
const (
	PhasePending     = "pending"
	PhaseApproved    = "approved"
	PhaseRolling     = "rolling"
	PhasePaused      = "paused"
	PhaseRollingBack = "rolling-back"
	PhaseDone        = "done"
	PhaseFailed      = "failed"
)

// Step states (api.UpdateStep.State).
const (
	StepPending    = "pending"
	StepRunning    = "running"
	StepDone       = "done"
	StepFailed     = "failed"
	StepRolledBack = "rolled-back"
)

// ActionKind is what the roller does next.
type ActionKind string

// Action kinds.
const (
	// ActWaitApproval: a manual update waits for `kctl update approve`.
	ActWaitApproval ActionKind = "wait-approval"
	// ActBlocked: the plan has blocking issues; nothing starts.
	ActBlocked ActionKind = "blocked"
	// ActStart: start step Step (mark it running, then execute it).
	ActStart ActionKind = "start"
	// ActWait: step Step is running; wait for its health gates.
	ActWait ActionKind = "wait"
	// ActPaused: the rollout is paused; wait for resume or rollback.
	ActPaused ActionKind = "paused"
	// ActRevert: roll back step Step (move its nodes back to the old pin).
	ActRevert ActionKind = "revert"
	// ActRolledBack: every finished step is rolled back.
	ActRolledBack ActionKind = "rolled-back"
	// ActDone: every step is done.
	ActDone ActionKind = "done"
	// ActFailed: the update failed and nothing more runs.
	ActFailed ActionKind = "failed"
	// ActInvalid: the status does not match the plan.
	ActInvalid ActionKind = "invalid"
)

// Action is the roller's next move. Step indexes the plan's steps and the
// status's Steps; it is -1 when the action names no step.
type Action struct {
	// Kind is what to do.
	Kind ActionKind `json:"kind"`
	// Step is the step to start, wait for or revert; -1 for none.
	Step int `json:"step"`
	// Message explains a wait, a pause or an invalid status.
	Message string `json:"message,omitempty"`
}

// ErrTransition is returned for a transition the current phase forbids.
var ErrTransition = errors.New("transition not allowed")

// InitialStatus is the status a new rollout is stored with: every step
// pending, phase approved when it starts at once (approval auto, or approve
// true), else pending.
func InitialStatus(p *RolloutPlan) api.UpdateStatus {
	st := api.UpdateStatus{Phase: PhasePending}
	if !p.WaitsForApproval {
		st.Phase = PhaseApproved
	}
	if p.Kubernetes != nil {
		st.ToVersion = Release(p.Kubernetes.To)
	}
	for _, s := range p.Steps {
		st.Steps = append(st.Steps, api.UpdateStep{
			Nodes: s.NodeIDs(), State: StepPending, Scope: s.Scope,
			SnapshotBefore: append([]string(nil), s.SnapshotBefore...),
		})
	}
	return st
}

// Release names a Kubernetes version as a release directory does: v1.37.2
// for 1.37.2 or v1.37.2; empty for anything that is not a full
// major.minor.patch version.
func Release(s string) string {
	v, ok := parseVersion(s)
	if !ok || v.patch < 0 {
		return ""
	}
	return "v" + v.String()
}

// Next says what the roller does next for the stored status. It only reads:
// the roller performs the action and stores the status the Mark functions
// return, so a new controller leader calls Next again and resumes from the
// exact step.
func Next(st api.UpdateStatus, p *RolloutPlan) Action {
	if len(st.Steps) != len(p.Steps) {
		return Action{Kind: ActInvalid, Step: -1, Message: fmt.Sprintf("status has %d steps, the plan %d", len(st.Steps), len(p.Steps))}
	}
	switch st.Phase {
	case PhaseDone:
		return Action{Kind: ActDone, Step: -1}
	case PhaseFailed:
		return Action{Kind: ActFailed, Step: -1, Message: st.Message}
	case PhasePaused:
		for i, s := range st.Steps {
			if s.State == StepRunning {
				return Action{Kind: ActWait, Step: i, Message: "paused after this step"}
			}
		}
		return Action{Kind: ActPaused, Step: -1, Message: st.Message}
	case PhaseRollingBack:
		if r := Rollback(st); len(r) > 0 {
			return Action{Kind: ActRevert, Step: r[0]}
		}
		return Action{Kind: ActRolledBack, Step: -1}
	case "", PhasePending:
		if p.Blocked() {
			return Action{Kind: ActBlocked, Step: -1, Message: fmt.Sprintf("%d blocking issues", len(p.Blocking))}
		}
		if p.WaitsForApproval {
			return Action{Kind: ActWaitApproval, Step: -1, Message: fmt.Sprintf("waits for approval: kctl update approve %s (or approve = true)", p.Name)}
		}
	case PhaseApproved:
		if p.Blocked() {
			return Action{Kind: ActBlocked, Step: -1, Message: fmt.Sprintf("%d blocking issues", len(p.Blocking))}
		}
	case PhaseRolling:
	default:
		return Action{Kind: ActInvalid, Step: -1, Message: fmt.Sprintf("unknown phase %q", st.Phase)}
	}
	for i, s := range st.Steps {
		switch s.State {
		case StepDone:
			continue
		case StepRunning:
			return Action{Kind: ActWait, Step: i}
		case StepFailed:
			return Action{Kind: ActPaused, Step: i, Message: s.Message}
		case "", StepPending:
			return Action{Kind: ActStart, Step: i}
		default:
			return Action{Kind: ActInvalid, Step: i, Message: fmt.Sprintf("step %d is %s while rolling forward", i+1, s.State)}
		}
	}
	return Action{Kind: ActDone, Step: -1}
}

// Rollback lists the steps a rollback reverses, in the order it reverses
// them: every step that ran (done, failed or running), last first.
func Rollback(st api.UpdateStatus) []int {
	var out []int
	for i := len(st.Steps) - 1; i >= 0; i-- {
		switch st.Steps[i].State {
		case StepDone, StepFailed, StepRunning:
			out = append(out, i)
		}
	}
	return out
}

// Approve moves a pending update to approved.
func Approve(st api.UpdateStatus) (api.UpdateStatus, error) {
	if st.Phase != "" && st.Phase != PhasePending {
		return st, fmt.Errorf("approve an update in phase %s: %w", st.Phase, ErrTransition)
	}
	out := clone(st)
	out.Phase = PhaseApproved
	return out, nil
}

// Pause stops the rollout after the running step (Next keeps waiting for
// it, and no new step starts); reason is kept in Message.
func Pause(st api.UpdateStatus, reason string) (api.UpdateStatus, error) {
	switch st.Phase {
	case "", PhasePending, PhaseApproved, PhaseRolling:
	default:
		return st, fmt.Errorf("pause an update in phase %s: %w", st.Phase, ErrTransition)
	}
	out := clone(st)
	out.Phase, out.Message = PhasePaused, reason
	return out, nil
}

// Resume continues a paused rollout. A failed step goes back to pending so
// it is tried again; the update returns to rolling once a step ran, else
// to approved.
func Resume(st api.UpdateStatus) (api.UpdateStatus, error) {
	if st.Phase != PhasePaused {
		return st, fmt.Errorf("resume an update in phase %s: %w", st.Phase, ErrTransition)
	}
	out := clone(st)
	out.Phase, out.Message = PhaseApproved, ""
	for i := range out.Steps {
		s := &out.Steps[i]
		if s.State == StepFailed {
			s.State, s.Message, s.FinishedAt = StepPending, "", ""
		}
		if s.State != StepPending && s.State != "" {
			out.Phase = PhaseRolling
		}
	}
	return out, nil
}

// StartRollback turns a paused, rolling or failed update into a rollback of
// the steps that ran.
func StartRollback(st api.UpdateStatus, reason string) (api.UpdateStatus, error) {
	switch st.Phase {
	case PhasePaused, PhaseRolling, PhaseFailed, PhaseDone:
	default:
		return st, fmt.Errorf("roll back an update in phase %s: %w", st.Phase, ErrTransition)
	}
	out := clone(st)
	out.Phase, out.Message = PhaseRollingBack, reason
	return out, nil
}

// MarkRunning records that step i started at the given RFC 3339 time.
func MarkRunning(st api.UpdateStatus, i int, at string) (api.UpdateStatus, error) {
	return mark(st, i, func(out *api.UpdateStatus, s *api.UpdateStep) error {
		if out.Phase != PhaseApproved && out.Phase != PhaseRolling {
			return fmt.Errorf("start step %d in phase %s: %w", i+1, out.Phase, ErrTransition)
		}
		out.Phase = PhaseRolling
		s.State, s.StartedAt, s.FinishedAt, s.Message = StepRunning, at, "", ""
		return nil
	})
}

// MarkDone records that step i passed its health gates; the update is done
// after its last step.
func MarkDone(st api.UpdateStatus, i int, at string) (api.UpdateStatus, error) {
	return mark(st, i, func(out *api.UpdateStatus, s *api.UpdateStep) error {
		if s.State != StepRunning {
			return fmt.Errorf("finish step %d that is %s: %w", i+1, s.State, ErrTransition)
		}
		s.State, s.FinishedAt = StepDone, at
		if i == len(out.Steps)-1 {
			out.Phase = PhaseDone
		}
		return nil
	})
}

// MarkFailed records that step i failed a health gate: the rollout pauses
// with the reason, for the operator to resume or roll back.
func MarkFailed(st api.UpdateStatus, i int, at, reason string) (api.UpdateStatus, error) {
	return mark(st, i, func(out *api.UpdateStatus, s *api.UpdateStep) error {
		if s.State != StepRunning {
			return fmt.Errorf("fail step %d that is %s: %w", i+1, s.State, ErrTransition)
		}
		s.State, s.FinishedAt, s.Message = StepFailed, at, reason
		out.Phase = PhasePaused
		out.Message = fmt.Sprintf("step %d failed: %s", i+1, reason)
		return nil
	})
}

// MarkRolledBack records that step i is back on the old pin. When no step
// is left to reverse, the update ends failed with a message saying it was
// rolled back.
func MarkRolledBack(st api.UpdateStatus, i int, at string) (api.UpdateStatus, error) {
	return mark(st, i, func(out *api.UpdateStatus, s *api.UpdateStep) error {
		if out.Phase != PhaseRollingBack {
			return fmt.Errorf("roll back step %d in phase %s: %w", i+1, out.Phase, ErrTransition)
		}
		if r := Rollback(*out); len(r) == 0 || r[0] != i {
			return fmt.Errorf("roll back step %d out of order: %w", i+1, ErrTransition)
		}
		s.State, s.FinishedAt = StepRolledBack, at
		if len(Rollback(*out)) == 0 {
			out.Phase = PhaseFailed
			out.Message = "rolled back: every step that ran is back on the previous pin"
		}
		return nil
	})
}

func mark(st api.UpdateStatus, i int, f func(*api.UpdateStatus, *api.UpdateStep) error) (api.UpdateStatus, error) {
	if i < 0 || i >= len(st.Steps) {
		return st, fmt.Errorf("step %d of %d: %w", i+1, len(st.Steps), ErrTransition)
	}
	out := clone(st)
	if err := f(&out, &out.Steps[i]); err != nil {
		return st, err
	}
	return out, nil
}

func clone(st api.UpdateStatus) api.UpdateStatus {
	out := st
	out.Steps = make([]api.UpdateStep, len(st.Steps))
	for i, s := range st.Steps {
		s.Nodes = append([]string(nil), s.Nodes...)
		out.Steps[i] = s
	}
	return out
}
