package rollout

import (
	"errors"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/plan"
)

// status builds a status with the given phase and step states.
func status(phase string, states ...string) api.UpdateStatus {
	st := api.UpdateStatus{Phase: phase}
	for i, s := range states {
		st.Steps = append(st.Steps, api.UpdateStep{Nodes: []string{"n" + string(rune('1'+i))}, State: s})
	}
	return st
}

// threeSteps is a plan with three steps; waits says whether it waits for approval.
func threeSteps(waits, blocked bool) *RolloutPlan {
	p := &RolloutPlan{Name: "release-0-5-0", WaitsForApproval: waits}
	for i := range 3 {
		p.Steps = append(p.Steps, Step{Nodes: []StepNode{{ID: "n" + string(rune('1'+i))}}})
	}
	if blocked {
		p.Blocking = append(p.Blocking, plan.Issue{Code: CodeNodeNotReady})
	}
	return p
}

func TestNext(t *testing.T) {
	tests := []struct {
		name    string
		st      api.UpdateStatus
		waits   bool
		blocked bool
		want    Action
	}{
		{"manual waits for approval", status(PhasePending, StepPending, StepPending, StepPending), true, false, Action{Kind: ActWaitApproval, Step: -1}},
		{"approved in the manifest starts", status(PhasePending, StepPending, StepPending, StepPending), false, false, Action{Kind: ActStart, Step: 0}},
		{"approved starts step 1", status(PhaseApproved, StepPending, StepPending, StepPending), true, false, Action{Kind: ActStart, Step: 0}},
		{"blocked never starts", status(PhaseApproved, StepPending, StepPending, StepPending), false, true, Action{Kind: ActBlocked, Step: -1}},
		{"running step is waited for", status(PhaseRolling, StepDone, StepRunning, StepPending), false, false, Action{Kind: ActWait, Step: 1}},
		{"resumes from the exact step", status(PhaseRolling, StepDone, StepDone, StepPending), false, false, Action{Kind: ActStart, Step: 2}},
		{"a rolling rollout is not blocked by a later plan", status(PhaseRolling, StepDone, StepPending, StepPending), false, true, Action{Kind: ActStart, Step: 1}},
		{"all done", status(PhaseRolling, StepDone, StepDone, StepDone), false, false, Action{Kind: ActDone, Step: -1}},
		{"done", status(PhaseDone, StepDone, StepDone, StepDone), false, false, Action{Kind: ActDone, Step: -1}},
		{"paused", status(PhasePaused, StepDone, StepFailed, StepPending), false, false, Action{Kind: ActPaused, Step: -1}},
		{"paused mid-step finishes the step", status(PhasePaused, StepDone, StepRunning, StepPending), false, false, Action{Kind: ActWait, Step: 1}},
		{"failed step pauses", status(PhaseRolling, StepDone, StepFailed, StepPending), false, false, Action{Kind: ActPaused, Step: 1}},
		{"rolling back the last finished step first", status(PhaseRollingBack, StepDone, StepFailed, StepPending), false, false, Action{Kind: ActRevert, Step: 1}},
		{"rolling back continues", status(PhaseRollingBack, StepDone, StepRolledBack, StepPending), false, false, Action{Kind: ActRevert, Step: 0}},
		{"rolled back", status(PhaseRollingBack, StepRolledBack, StepRolledBack, StepPending), false, false, Action{Kind: ActRolledBack, Step: -1}},
		{"failed", status(PhaseFailed, StepRolledBack, StepPending, StepPending), false, false, Action{Kind: ActFailed, Step: -1}},
		{"steps do not match the plan", status(PhaseRolling, StepDone), false, false, Action{Kind: ActInvalid, Step: -1}},
		{"unknown phase", status("exploding", StepDone, StepDone, StepDone), false, false, Action{Kind: ActInvalid, Step: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Next(tc.st, threeSteps(tc.waits, tc.blocked))
			if got.Kind != tc.want.Kind || got.Step != tc.want.Step {
				t.Errorf("Next = %+v, want %s step %d", got, tc.want.Kind, tc.want.Step)
			}
		})
	}
}

func TestRollbackOrder(t *testing.T) {
	tests := []struct {
		name string
		st   api.UpdateStatus
		want []int
	}{
		{"nothing ran", status(PhasePaused, StepPending, StepPending), nil},
		{"finished steps in reverse", status(PhasePaused, StepDone, StepDone, StepFailed, StepPending), []int{2, 1, 0}},
		{"a running step first", status(PhaseRolling, StepDone, StepRunning, StepPending), []int{1, 0}},
		{"rolled-back steps are skipped", status(PhaseRollingBack, StepDone, StepRolledBack), []int{0}},
	}
	for _, tc := range tests {
		if got := Rollback(tc.st); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Rollback = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		name  string
		st    api.UpdateStatus
		do    func(api.UpdateStatus) (api.UpdateStatus, error)
		phase string
		steps []string
		err   bool
	}{
		{"approve", status(PhasePending, StepPending), Approve, PhaseApproved, []string{StepPending}, false},
		{"approve twice", status(PhaseApproved, StepPending), Approve, "", nil, true},
		{"pause while rolling", status(PhaseRolling, StepDone, StepRunning),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return Pause(s, "operator") }, PhasePaused, []string{StepDone, StepRunning}, false},
		{"pause when done", status(PhaseDone, StepDone),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return Pause(s, "operator") }, "", nil, true},
		{"resume retries the failed step", status(PhasePaused, StepDone, StepFailed, StepPending), Resume, PhaseRolling, []string{StepDone, StepPending, StepPending}, false},
		{"resume before any step", status(PhasePaused, StepPending, StepPending), Resume, PhaseApproved, []string{StepPending, StepPending}, false},
		{"resume a rolling update", status(PhaseRolling, StepDone), Resume, "", nil, true},
		{"roll back a paused update", status(PhasePaused, StepDone, StepFailed),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return StartRollback(s, "operator") }, PhaseRollingBack, []string{StepDone, StepFailed}, false},
		{"roll back a pending update", status(PhasePending, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return StartRollback(s, "operator") }, "", nil, true},
		{"start a step", status(PhaseApproved, StepPending, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRunning(s, 0, "t1") }, PhaseRolling, []string{StepRunning, StepPending}, false},
		{"no step starts while paused", status(PhasePaused, StepDone, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRunning(s, 1, "t1") }, "", nil, true},
		{"no step starts before approval", status(PhasePending, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRunning(s, 0, "t1") }, "", nil, true},
		{"finish a step", status(PhaseRolling, StepRunning, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkDone(s, 0, "t2") }, PhaseRolling, []string{StepDone, StepPending}, false},
		{"finish the last step", status(PhaseRolling, StepDone, StepRunning),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkDone(s, 1, "t2") }, PhaseDone, []string{StepDone, StepDone}, false},
		{"finish a step that is not running", status(PhaseRolling, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkDone(s, 0, "t2") }, "", nil, true},
		{"a failed gate pauses", status(PhaseRolling, StepDone, StepRunning),
			func(s api.UpdateStatus) (api.UpdateStatus, error) {
				return MarkFailed(s, 1, "t2", "node-107: /readyz failed")
			}, PhasePaused, []string{StepDone, StepFailed}, false},
		{"roll back out of order", status(PhaseRollingBack, StepDone, StepDone),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRolledBack(s, 0, "t3") }, "", nil, true},
		{"roll back the last step that ran", status(PhaseRollingBack, StepDone, StepDone),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRolledBack(s, 1, "t3") }, PhaseRollingBack, []string{StepDone, StepRolledBack}, false},
		{"roll back the first step ends the rollback", status(PhaseRollingBack, StepDone, StepRolledBack),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRolledBack(s, 0, "t3") }, PhaseFailed, []string{StepRolledBack, StepRolledBack}, false},
		{"step out of range", status(PhaseRolling, StepPending),
			func(s api.UpdateStatus) (api.UpdateStatus, error) { return MarkRunning(s, 5, "t1") }, "", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := clone(tc.st)
			got, err := tc.do(tc.st)
			if tc.err {
				if !errors.Is(err, ErrTransition) {
					t.Fatalf("err = %v, want ErrTransition", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Phase != tc.phase {
				t.Errorf("phase = %s, want %s", got.Phase, tc.phase)
			}
			var states []string
			for _, s := range got.Steps {
				states = append(states, s.State)
			}
			if !slices.Equal(states, tc.steps) {
				t.Errorf("steps = %v, want %v", states, tc.steps)
			}
			for i := range before.Steps {
				if tc.st.Steps[i].State != before.Steps[i].State {
					t.Errorf("the input status was modified")
				}
			}
		})
	}
}

// TestDriveRollout drives the reference rollout on the lab through the state
// machine as a roller would: approval, a failed health gate that pauses,
// resume, a leader change (a fresh Next from the stored status), and a
// rollback that reverses the finished steps in reverse order.
func TestDriveRollout(t *testing.T) {
	p := Plan(labInput())
	st := InitialStatus(p)
	must := func(s api.UpdateStatus, err error) api.UpdateStatus {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if a := Next(st, p); a.Kind != ActWaitApproval {
		t.Fatalf("fresh manual rollout: %+v", a)
	}
	st = must(Approve(st))
	var order []string
	failedOnce := false
	for range 20 {
		a := Next(st, p)
		switch a.Kind {
		case ActStart:
			st = must(MarkRunning(st, a.Step, "t"))
		case ActWait:
			if a.Step == 1 && !failedOnce {
				failedOnce = true
				st = must(MarkFailed(st, a.Step, "t", "node-107: kube-apiserver /readyz failed"))
				continue
			}
			order = append(order, st.Steps[a.Step].Nodes[0])
			st = must(MarkDone(st, a.Step, "t"))
		case ActPaused:
			if st.Message != "step 2 failed: node-107: kube-apiserver /readyz failed" {
				t.Errorf("paused message = %q", st.Message)
			}
			st = must(Resume(st))
		case ActDone:
			if want := []string{"node-103", "node-107", "node-105"}; !slices.Equal(order, want) {
				t.Errorf("rolled %v, want %v", order, want)
			}
			if st.Phase != PhaseDone {
				t.Errorf("phase = %s", st.Phase)
			}
			st = must(StartRollback(st, "operator"))
			var reverted []string
			for a := Next(st, p); a.Kind == ActRevert; a = Next(st, p) {
				reverted = append(reverted, st.Steps[a.Step].Nodes[0])
				st = must(MarkRolledBack(st, a.Step, "t"))
			}
			if want := []string{"node-105", "node-107", "node-103"}; !slices.Equal(reverted, want) {
				t.Errorf("reverted %v, want %v", reverted, want)
			}
			if a := Next(st, p); a.Kind != ActFailed {
				t.Errorf("after the rollback: %+v", a)
			}
			return
		default:
			t.Fatalf("unexpected %+v", a)
		}
	}
	t.Fatal("the rollout did not finish in 20 moves")
}
