package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
)

// orderUnits sorts units so each comes after the units it names in After
// (keeping the rendered order otherwise); units in a cycle are returned
// separately.
func orderUnits(units []api.Unit) (ordered []api.Unit, cyclic []api.Unit) {
	byName := map[string]int{}
	for i, u := range units {
		byName[u.Name] = i
	}
	const (
		unvisited = iota
		visiting
		done
	)
	mark := make([]int, len(units))
	inCycle := make([]bool, len(units))
	var visit func(i int) bool
	visit = func(i int) bool {
		switch mark[i] {
		case done:
			return !inCycle[i]
		case visiting:
			return false
		}
		mark[i] = visiting
		ok := true
		for _, dep := range units[i].After {
			if j, found := byName[dep]; found && !visit(j) {
				ok = false
			}
		}
		mark[i] = done
		if !ok {
			inCycle[i] = true
			return false
		}
		ordered = append(ordered, units[i])
		return true
	}
	for i := range units {
		visit(i)
	}
	for i, u := range units {
		if inCycle[i] {
			cyclic = append(cyclic, u)
		}
	}
	return ordered, cyclic
}

func (a *Applier) settle() time.Duration {
	if a.UnitSettle > 0 {
		return a.UnitSettle
	}
	return 5 * time.Second
}

// unitReady reports whether a unit is ready for the ones after it (readyNow
// of the rendered unit; a name not rendered has no HealthURL to answer).
func (a *Applier) unitReady(ctx context.Context, name string) (runtime.UnitStatus, bool) {
	u, ok := a.rendered[name]
	if !ok {
		u = api.Unit{Name: name}
	}
	return a.readyNow(ctx, u)
}

// readyNow reports whether u is ready: its runtime status is ready and,
// when it has a HealthURL (and is not a oneshot), the probe answers, or
// answered for this very process (same PID, same restart count) less than
// HealthyReuse ago.
func (a *Applier) readyNow(ctx context.Context, u api.Unit) (runtime.UnitStatus, bool) {
	st, err := a.Runtime.Status(ctx, u.Name)
	if err != nil || !st.Ready() {
		return st, false
	}
	if u.HealthURL == "" || u.Oneshot || a.passed.recent(u.Name, st) {
		return st, true
	}
	if err := a.probe(ctx, u.HealthURL); err != nil {
		st.Message = "unhealthy: " + err.Error()
		return st, false
	}
	a.passed.record(u.Name, st)
	return st, true
}

// unitRun is what one apply did with one unit: its report item, and when it
// (re)started the unit (zero when it did not).
type unitRun struct {
	unit    api.Unit
	item    api.ItemStatus
	started time.Time
}

func (a *Applier) dependencyWait() time.Duration {
	if a.DependencyWait > 0 {
		return a.DependencyWait
	}
	return 60 * time.Second
}

// settling reports whether a unit this apply started is still within the
// dependency wait and has not failed: the units and tasks after it wait
// for it.
func (a *Applier) settling(ctx context.Context, name string, started map[string]time.Time) bool {
	at, ok := started[name]
	if !ok || time.Since(at) >= max(a.settle(), a.dependencyWait()) {
		return false
	}
	st, err := a.Runtime.Status(ctx, name)
	return err != nil || st.State != runtime.StateFailed
}

// awaitDeps waits while a dependency in after is not ready but still
// settling, and returns the ones not ready in the end.
func (a *Applier) awaitDeps(ctx context.Context, after []string, want map[string]bool, started map[string]time.Time) []string {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		waiting := a.notReady(ctx, after, want)
		if len(waiting) == 0 || !slices.ContainsFunc(waiting, func(d string) bool { return a.settling(ctx, d, started) }) {
			return waiting
		}
		select {
		case <-ctx.Done():
			return waiting
		case <-tick.C:
		}
	}
}

// startUnits ensures every unit in dependency order, in waves: each wave
// starts every unit whose After units are ready, and leaves for a later
// wave the units that wait for one this apply (re)started and that is
// still settling (or for one left for later). A unit whose After units are
// not ready otherwise stays pending. So units nothing waits for (kubelet,
// kube-proxy, keepalived) start at once, and they settle together later
// (settleUnits). It also stops the units no longer rendered; started maps
// the units it (re)started to when.
func (a *Applier) startUnits(ctx context.Context, ns *api.NodeState, cs *ClusterState) (runs []*unitRun, other []api.ItemStatus, started map[string]time.Time) {
	ordered, cyclic := orderUnits(ns.Units)
	for _, u := range cyclic {
		other = append(other, api.ItemStatus{Kind: KindUnit, Name: u.Name, State: api.ItemFailed, Message: "dependency cycle in after"})
	}
	want := map[string]bool{}
	for _, u := range ns.Units {
		want[u.Name] = true
	}
	started = map[string]time.Time{}
	byName := map[string]*unitRun{}
	for _, u := range ordered {
		r := &unitRun{unit: u, item: api.ItemStatus{Kind: KindUnit, Name: u.Name}}
		runs = append(runs, r)
		byName[u.Name] = r
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	remaining := ordered
	for len(remaining) > 0 {
		later := map[string]bool{}
		var next []api.Unit
		for _, u := range remaining {
			r := byName[u.Name]
			if ctx.Err() != nil {
				r.item.State, r.item.Message = api.ItemPending, "interrupted"
				continue
			}
			waiting := a.notReady(ctx, u.After, want)
			if len(waiting) > 0 {
				if slices.ContainsFunc(waiting, func(d string) bool { return later[d] || a.settling(ctx, d, started) }) {
					later[u.Name] = true
					next = append(next, u)
					continue
				}
				r.item.State, r.item.Message = api.ItemPending, "waiting for "+strings.Join(waiting, ", ")
				continue
			}
			a.ensureUnit(ctx, r, cs, started)
		}
		if len(next) == len(remaining) {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		remaining = next
	}
	for _, name := range removeOrder(cs) {
		if want[name] {
			continue
		}
		if err := a.drainUnit(ctx, cs, name); err != nil {
			other = append(other, api.ItemStatus{Kind: KindUnit, Name: name, State: api.ItemFailed, Message: err.Error()})
		}
		if err := a.removeUnit(ctx, cs, name); err != nil {
			other = append(other, api.ItemStatus{Kind: KindUnit, Name: name, State: api.ItemFailed, Message: err.Error()})
			continue
		}
		a.log().Info("stopped unit no longer rendered", "unit", name)
	}
	return runs, other, started
}

// reloadDue reports whether the agent reloads a unit the runtime did not
// (re)start: it has a ReloadHash, and its process last read other inputs
// (applied is the ReloadHash recorded; empty when unknown, which reloads
// too: SIGHUP only makes it read its current files). This is the same
// comparison the plan makes when it says a unit reloads (plan.NodeDiff):
// the input hash equal, the reload hash not.
func reloadDue(u api.Unit, applied string) bool {
	return u.ReloadHash != "" && u.ReloadHash != applied
}

// ensureUnit hands r's unit to the runtime: a (re)started unit is recorded
// in started and settles later; an unchanged one whose reloaded inputs
// changed is reloaded (SIGHUP), not restarted; either is then reported as
// it is.
func (a *Applier) ensureUnit(ctx context.Context, r *unitRun, cs *ClusterState, started map[string]time.Time) {
	u := r.unit
	changed, err := a.Runtime.Ensure(ctx, u)
	cs.Units[u.Name] = u.InputHash
	if u.CRIEndpoint != "" {
		cs.CRI[u.Name] = u.CRIEndpoint
	} else {
		delete(cs.CRI, u.Name)
	}
	if err != nil {
		r.item.State, r.item.Message = api.ItemFailed, err.Error()
		a.log().Error("ensure unit", "unit", u.Name, "err", err)
		return
	}
	if changed {
		a.log().Info("started unit", "unit", u.Name, "inputHash", u.InputHash)
		setOrDelete(cs.Reloads, u.Name, u.ReloadHash)
		r.started = time.Now()
		started[u.Name] = r.started
		return
	}
	reloaded := false
	if reloadDue(u, cs.Reloads[u.Name]) {
		if err := a.Runtime.Reload(ctx, u.Name); err != nil {
			r.item.State, r.item.Message = api.ItemFailed, err.Error()
			a.log().Error("reload unit", "unit", u.Name, "err", err)
			return
		}
		a.log().Info("reloaded unit", "unit", u.Name, "reloadHash", u.ReloadHash)
		reloaded = true
	}
	setOrDelete(cs.Reloads, u.Name, u.ReloadHash)
	st, ready := a.unitReady(ctx, u.Name)
	r.item.State, r.item.Message = unitItemState(st, ready, false)
	if reloaded && r.item.State == api.ItemOK {
		r.item.Message = "reloaded"
	}
	if r.item.State == api.ItemFailed && !u.Oneshot {
		r.item.Restarts, r.item.Restarting = a.crashCount(st, u, false)
	}
}

// setOrDelete sets m[k] to v, or deletes k when v is empty.
func setOrDelete(m map[string]string, k, v string) {
	if v == "" {
		delete(m, k)
		return
	}
	m[k] = v
}

// settleUnits waits, all at once, until every unit this apply (re)started
// is ready, failed, or past its settle time, and returns every unit's item.
func (a *Applier) settleUnits(ctx context.Context, runs []*unitRun) []api.ItemStatus {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		open := false
		for _, r := range runs {
			if r.started.IsZero() || r.item.State != "" {
				continue
			}
			st, ready := a.unitReady(ctx, r.unit.Name)
			if ready || st.State == runtime.StateFailed || time.Since(r.started) >= a.settle() || ctx.Err() != nil {
				r.item.State, r.item.Message = unitItemState(st, ready, true)
				if r.item.State == api.ItemFailed && !r.unit.Oneshot {
					r.item.Restarts, r.item.Restarting = a.crashCount(st, r.unit, true)
				}
				continue
			}
			open = true
		}
		if !open {
			break
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	items := make([]api.ItemStatus, 0, len(runs))
	for _, r := range runs {
		items = append(items, r.item)
	}
	return items
}

// unitItemState maps a unit's status to a report item state.
func unitItemState(st runtime.UnitStatus, ready, changed bool) (string, string) {
	msg := ""
	if changed {
		msg = "started"
	}
	switch {
	case ready:
		return api.ItemOK, msg
	case st.Ready():
		return api.ItemPending, st.Message
	case st.State == runtime.StateFailed:
		return api.ItemFailed, strings.TrimSpace(fmt.Sprintf("%s exit code %d %s", st.State, st.ExitCode, st.Message))
	case st.State == runtime.StateExited && !st.Oneshot:
		return api.ItemFailed, "exited"
	}
	if st.State == "" {
		return api.ItemPending, msg
	}
	return api.ItemPending, st.State
}

// notReady lists the dependencies in after that are not ready yet; names
// that are neither units of this state nor known to the runtime are ignored
// here (tasks check their task dependencies themselves).
func (a *Applier) notReady(ctx context.Context, after []string, units map[string]bool) []string {
	var waiting []string
	for _, dep := range after {
		if _, ready := a.unitReady(ctx, dep); ready {
			continue
		}
		if _, err := a.Runtime.Status(ctx, dep); units[dep] || !errors.Is(err, runtime.ErrUnknownUnit) {
			waiting = append(waiting, dep)
		}
	}
	return waiting
}

func (a *Applier) taskTimeout() time.Duration {
	if a.TaskTimeout > 0 {
		return a.TaskTimeout
	}
	return 10 * time.Minute
}

// applyTasks runs the tasks whose input changed once their After items are
// done: a task waits for a unit this apply started (started) while it
// settles. It starts each task as soon as its After items are done, beside
// the tasks already running, and looks again at the waiting ones whenever
// one ends. So independent tasks (the provisioner's apply and the
// add-ons') overlap, a task that waits for another starts the moment that
// one is done, not once everything started with it is, and the order the
// tasks are listed in does not matter. The items keep the tasks' order.
func (a *Applier) applyTasks(ctx context.Context, ns *api.NodeState, cs *ClusterState, started map[string]time.Time) []api.ItemStatus {
	units := map[string]bool{}
	for _, u := range ns.Units {
		units[u.Name] = true
	}
	tasks := map[string]string{}
	for _, t := range ns.Tasks {
		tasks[t.Name] = t.InputHash
	}
	type ended struct {
		t   api.Task
		err error
	}
	results := make(chan ended)
	running := map[string]bool{}
	decided := map[string]api.ItemStatus{}
	for {
		progress := false
		for _, t := range ns.Tasks {
			if _, ok := decided[t.Name]; ok || running[t.Name] {
				continue
			}
			waiting, later := a.taskWaits(ctx, t, tasks, cs, decided, units, started)
			if later {
				continue
			}
			progress = true
			it := api.ItemStatus{Kind: KindTask, Name: t.Name, State: api.ItemOK}
			switch {
			case cs.Tasks[t.Name] == t.InputHash:
			case ctx.Err() != nil:
				it.State, it.Message = api.ItemPending, "interrupted"
			case len(waiting) > 0:
				it.State, it.Message = api.ItemPending, "waiting for "+strings.Join(waiting, ", ")
			case len(t.Argv) == 0:
				it.State, it.Message = api.ItemFailed, "empty argv"
			default:
				running[t.Name] = true
				go func() { results <- ended{t, a.runTask(ctx, t)} }()
				continue
			}
			decided[t.Name] = it
		}
		if len(running) == 0 {
			if !progress {
				break
			}
			continue
		}
		r := <-results
		delete(running, r.t.Name)
		it := api.ItemStatus{Kind: KindTask, Name: r.t.Name, State: api.ItemOK, Message: "ran"}
		if r.err != nil {
			it.State, it.Message = api.ItemFailed, r.err.Error()
			a.log().Error("run task", "task", r.t.Name, "err", r.err)
		} else {
			cs.Tasks[r.t.Name] = r.t.InputHash
			if err := a.state.save(a.Root); err != nil {
				it.State, it.Message = api.ItemFailed, err.Error()
			}
		}
		decided[r.t.Name] = it
	}
	var items []api.ItemStatus
	for _, t := range ns.Tasks {
		it, ok := decided[t.Name]
		if !ok {
			// Left waiting on tasks that wait on it: a cycle in After.
			var deps []string
			for _, dep := range t.After {
				if _, isTask := tasks[dep]; isTask && cs.Tasks[dep] != tasks[dep] {
					deps = append(deps, dep)
				}
			}
			it = api.ItemStatus{Kind: KindTask, Name: t.Name, State: api.ItemPending, Message: "waiting for " + strings.Join(deps, ", ") + " (a cycle in after)"}
		}
		items = append(items, it)
	}
	for name := range cs.Tasks {
		if _, ok := tasks[name]; !ok {
			delete(cs.Tasks, name)
		}
	}
	return items
}

// taskWaits says what task t waits for: the After tasks not done with their
// current input and the After units not ready (awaited while they settle).
// later is true when an After task is not decided yet in this apply: t is
// looked at again once it is.
func (a *Applier) taskWaits(ctx context.Context, t api.Task, tasks map[string]string, cs *ClusterState, decided map[string]api.ItemStatus, units map[string]bool, started map[string]time.Time) (waiting []string, later bool) {
	var unitDeps []string
	for _, dep := range t.After {
		h, isTask := tasks[dep]
		switch {
		case !isTask:
			unitDeps = append(unitDeps, dep)
		case cs.Tasks[dep] == h:
		default:
			if _, ok := decided[dep]; !ok {
				return nil, true
			}
			waiting = append(waiting, dep)
		}
	}
	if cs.Tasks[t.Name] == t.InputHash {
		return waiting, false
	}
	for _, dep := range unitDeps {
		waiting = append(waiting, a.awaitDeps(ctx, []string{dep}, units, started)...)
	}
	return waiting, false
}

// runTask runs a task through the runner, a bare argv[0] resolved in BinDir first.
func (a *Applier) runTask(ctx context.Context, t api.Task) error {
	argv := append([]string{}, t.Argv...)
	if a.BinDir != "" && !strings.Contains(argv[0], "/") {
		if p, err := execrun.LookPath(argv[0], []string{a.BinDir}); err == nil && strings.HasPrefix(p, a.BinDir) {
			argv[0] = p
		}
	}
	a.log().Info("run task", "task", t.Name, "inputHash", t.InputHash)
	t0 := time.Now()
	_, err := a.Runner.Run(ctx, argv, execrun.WithTimeout(a.taskTimeout()), execrun.WithExtraEnv("KCORE_ROOT="+a.Root))
	if err == nil {
		a.log().Info("ran task", "task", t.Name, "took", time.Since(t0).Round(time.Millisecond))
	}
	return err
}
