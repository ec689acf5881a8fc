package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// pairBound bounds how long one of two tasks that must overlap waits for
// the other to start: a bound on a hang, not a speed.
const pairBound = 10 * time.Second

// pairRunner runs argv[0] "a" and "b" only together: each waits until the
// other has started, and fails when it never does. Every other command
// succeeds at once. It records when each command starts and ends, in
// order.
type pairRunner struct {
	mu     sync.Mutex
	events []string
	a, b   chan struct{}
}

func newPairRunner() *pairRunner {
	return &pairRunner{a: make(chan struct{}), b: make(chan struct{})}
}

func (r *pairRunner) note(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *pairRunner) Run(ctx context.Context, argv []string, _ ...execrun.Option) (execrun.Result, error) {
	name := argv[0]
	r.note("start " + name)
	defer r.note("end " + name)
	mine, other := r.a, r.b
	switch name {
	case "a":
	case "b":
		mine, other = r.b, r.a
	default:
		return execrun.Result{}, nil
	}
	close(mine)
	select {
	case <-other:
		return execrun.Result{}, nil
	case <-ctx.Done():
		return execrun.Result{}, ctx.Err()
	case <-time.After(pairBound):
		return execrun.Result{}, errors.New(name + " ran alone: the other task never started beside it")
	}
}

func (r *pairRunner) index(e string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.events {
		if x == e {
			return i
		}
	}
	return -1
}

func taskState(tasks ...api.Task) api.NodeState {
	return api.NodeState{Cluster: "lab", NodeID: "lab-n1", Generation: 1, Tasks: tasks}
}

func taskItems(t *testing.T, reps []api.NodeReport) map[string]api.ItemStatus {
	t.Helper()
	out := map[string]api.ItemStatus{}
	for _, r := range reps {
		for _, it := range r.Items {
			if it.Kind == KindTask {
				out[it.Name] = it
			}
		}
	}
	return out
}

// Tasks that wait for nothing between them run at once (the provisioner's
// apply beside the add-ons'); one that waits for a task runs once that
// task is done, in the same apply.
func TestIndependentTasksRunTogether(t *testing.T) {
	run := newPairRunner()
	a := newApplier(t.TempDir(), &fakeRuntime{}, run)
	ns := taskState(
		api.Task{Name: "first", Argv: []string{"a"}, InputHash: "1"},
		api.Task{Name: "after-first", Argv: []string{"c"}, InputHash: "1", After: []string{"first"}},
		api.Task{Name: "second", Argv: []string{"b"}, InputHash: "1"},
	)
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	items := taskItems(t, reps)
	for _, name := range []string{"first", "after-first", "second"} {
		if it := items[name]; it.State != api.ItemOK || it.Message != "ran" {
			t.Errorf("task %s: %s %q, want ok, ran", name, it.State, it.Message)
		}
	}
	if end, start := run.index("end a"), run.index("start c"); end < 0 || start < end {
		t.Errorf("after-first started before first ended: %v", run.events)
	}
	var names []string
	for _, it := range reps[0].Items {
		names = append(names, it.Name)
	}
	if got := strings.Join(names, ","); got != "first,after-first,second" {
		t.Errorf("items in order %s, want the tasks' order", got)
	}
}

// A task listed before the task it waits for still runs in the same
// apply, after it.
func TestTaskListedBeforeItsDependencyRunsAfterIt(t *testing.T) {
	run := newPairRunner()
	a := newApplier(t.TempDir(), &fakeRuntime{}, run)
	ns := taskState(
		api.Task{Name: "dependent", Argv: []string{"d"}, InputHash: "1", After: []string{"base"}},
		api.Task{Name: "base", Argv: []string{"e"}, InputHash: "1"},
	)
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	for name, it := range taskItems(t, reps) {
		if it.State != api.ItemOK {
			t.Errorf("task %s: %s %q, want ok", name, it.State, it.Message)
		}
	}
	if end, start := run.index("end e"), run.index("start d"); end < 0 || start < end {
		t.Errorf("dependent started before base ended: %v", run.events)
	}
}

// A task whose dependency failed waits, and runs on a later apply once the
// dependency succeeds; tasks in a cycle wait and say so.
func TestTasksWaitForFailedDependenciesAndCycles(t *testing.T) {
	rec := execrun.NewRecorder().OnExit("base", 1, "boom").On("base", execrun.Result{}, nil)
	a := newApplier(t.TempDir(), &fakeRuntime{}, rec)
	ns := taskState(
		api.Task{Name: "base", Argv: []string{"base"}, InputHash: "1"},
		api.Task{Name: "dependent", Argv: []string{"dep"}, InputHash: "1", After: []string{"base"}},
		api.Task{Name: "x", Argv: []string{"x"}, InputHash: "1", After: []string{"y"}},
		api.Task{Name: "y", Argv: []string{"y"}, InputHash: "1", After: []string{"x"}},
	)
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	items := taskItems(t, reps)
	if it := items["base"]; it.State != api.ItemFailed {
		t.Errorf("base: %s %q, want failed", it.State, it.Message)
	}
	if it := items["dependent"]; it.State != api.ItemPending || it.Message != "waiting for base" {
		t.Errorf("dependent: %s %q, want pending, waiting for base", it.State, it.Message)
	}
	for _, name := range []string{"x", "y"} {
		if it := items[name]; it.State != api.ItemPending || !strings.Contains(it.Message, "a cycle in after") {
			t.Errorf("%s: %s %q, want pending on a cycle", name, it.State, it.Message)
		}
	}
	if n := countCommands(rec, "dep"); n != 0 {
		t.Errorf("dependent ran %d times while base failed", n)
	}
	reps, err = a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	items = taskItems(t, reps)
	for _, name := range []string{"base", "dependent"} {
		if it := items[name]; it.State != api.ItemOK {
			t.Errorf("second apply: %s: %s %q, want ok", name, it.State, it.Message)
		}
	}
}

// A task that waits for a quick one starts as soon as that one is done,
// while a slow task started with it still runs: "a" ends only once "b"
// has started beside it.
func TestTaskStartsWhenItsDependencyEnds(t *testing.T) {
	run := newPairRunner()
	a := newApplier(t.TempDir(), &fakeRuntime{}, run)
	ns := taskState(
		api.Task{Name: "slow", Argv: []string{"a"}, InputHash: "1"},
		api.Task{Name: "quick", Argv: []string{"q"}, InputHash: "1"},
		api.Task{Name: "after-quick", Argv: []string{"b"}, InputHash: "1", After: []string{"quick"}},
	)
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil {
		t.Fatal(err)
	}
	for name, it := range taskItems(t, reps) {
		if it.State != api.ItemOK || it.Message != "ran" {
			t.Errorf("task %s: %s %q, want ok, ran", name, it.State, it.Message)
		}
	}
	if end, start := run.index("end q"), run.index("start b"); end < 0 || start < end {
		t.Errorf("after-quick started before quick ended: %v", run.events)
	}
}
