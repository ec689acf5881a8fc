package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/runtime"
)

// liveState is what Live needs between applies: the last Apply's reports,
// the units they were for, and what the watcher knows about each service
// that Apply reported ok.
type liveState struct {
	mu      sync.Mutex
	reports []api.NodeReport
	units   map[string]api.Unit
	watch   map[string]*unitWatch
}

// unitWatch follows one service between applies.
type unitWatch struct {
	hash     string
	base     int       // restarts when the last Apply reported it ok
	restarts int       // restarts seen when it was last known good
	pid      int       // pid seen when it was last known good
	down     bool      // crashed since, not settled yet
	msg      string    // why it is down
	count    int       // restarts since base, counting the one awaited
	again    bool      // the runtime will restart it (or has)
	upPID    int       // the process seen running while down
	upSince  time.Time // since when upPID runs
}

// setBase records an Apply's reports as the base Live works from. Services
// reported ok are watched from their current restart count and PID; a
// service already seen down keeps its watch (same input hash), whatever the
// re-apply said, so a re-apply does not hide a crash before the unit has
// settled.
func (a *Applier) setBase(ctx context.Context, reports []api.NodeReport) {
	a.live.mu.Lock()
	defer a.live.mu.Unlock()
	a.live.reports = copyReports(reports)
	a.live.units = make(map[string]api.Unit, len(a.rendered))
	for n, u := range a.rendered {
		a.live.units[n] = u
	}
	old := a.live.watch
	a.live.watch = map[string]*unitWatch{}
	for _, r := range reports {
		for _, it := range r.Items {
			u, ok := a.live.units[it.Name]
			if it.Kind != KindUnit || !ok || u.Oneshot {
				continue
			}
			if w := old[it.Name]; w != nil && w.down && w.hash == u.InputHash {
				a.live.watch[it.Name] = w
				continue
			}
			if it.State != api.ItemOK {
				continue
			}
			st, err := a.Runtime.Status(ctx, it.Name)
			if err != nil {
				continue
			}
			a.live.watch[it.Name] = &unitWatch{hash: u.InputHash, base: st.Restarts, restarts: st.Restarts, pid: st.PID}
		}
	}
}

// Live is the last Apply's reports with the current state of the services
// it reported ok: one that crashed since (exited, in restart backoff,
// restarted, failed) is `failed` with a message saying when and how, until
// it has run again for the settle time and its HealthURL answers. A crashed
// item carries Restarts (restarts since the last Apply, counting the one
// awaited) and Restarting (the runtime restarts it), so the controller can
// tell churn from a crash loop without reading the message. It runs no
// unit and writes nothing; the agent calls it every second or so and sends
// the reports that changed. Units the agent itself is restarting or
// stopping (another input hash, stopped, unknown) are left to Apply.
func (a *Applier) Live(ctx context.Context) []api.NodeReport {
	a.live.mu.Lock()
	defer a.live.mu.Unlock()
	out := copyReports(a.live.reports)
	for i := range out {
		for j := range out[i].Items {
			it := &out[i].Items[j]
			w := a.live.watch[it.Name]
			if it.Kind != KindUnit || w == nil {
				continue
			}
			if a.observe(ctx, a.live.units[it.Name], w) {
				it.State, it.Message, it.Restarts, it.Restarting = api.ItemFailed, w.msg, w.count, w.again
			}
		}
	}
	return out
}

// PendingReady reports whether a unit the last Apply reported pending is
// ready now (running past its start, and its HealthURL answers): an Apply
// would report it ok. The agent re-applies at once when it is.
func (a *Applier) PendingReady(ctx context.Context) bool {
	a.live.mu.Lock()
	var units []api.Unit
	for _, r := range a.live.reports {
		for _, it := range r.Items {
			if u, ok := a.live.units[it.Name]; ok && it.Kind == KindUnit && it.State == api.ItemPending {
				units = append(units, u)
			}
		}
	}
	a.live.mu.Unlock()
	for _, u := range units {
		if st, ok := a.readyNow(ctx, u); ok && (st.InputHash == "" || st.InputHash == u.InputHash) {
			return true
		}
	}
	return false
}

// observe updates w from the unit's status and reports whether it is down;
// w.msg, w.count and w.again then say how.
func (a *Applier) observe(ctx context.Context, u api.Unit, w *unitWatch) bool {
	st, err := a.Runtime.Status(ctx, u.Name)
	if err != nil || (st.InputHash != "" && st.InputHash != u.InputHash) || st.State == runtime.StateStopped {
		return w.down
	}
	if !w.down {
		crashed := st.State != runtime.StateRunning || st.Restarts != w.restarts || (w.pid != 0 && st.PID != w.pid)
		if !crashed {
			return false
		}
		w.down, w.upPID = true, 0
		a.log().Warn("unit crashed", "unit", u.Name, "state", st.State, "exitCode", st.ExitCode, "restarts", st.Restarts)
	}
	w.msg = crashMessage(st, u)
	n, again := restartNumber(st, u)
	w.count, w.again = max(n-w.base, 0), again
	if st.State != runtime.StateRunning || st.PID == 0 {
		w.upPID = 0
		return true
	}
	if st.PID != w.upPID {
		w.upPID, w.upSince = st.PID, time.Now()
		if !st.Since.IsZero() {
			w.upSince = st.Since
		}
	}
	if time.Since(w.upSince) < a.settle() {
		return true
	}
	if u.HealthURL != "" && a.probe(ctx, u.HealthURL) != nil {
		return true
	}
	w.down, w.restarts, w.pid, w.msg, w.count, w.again = false, st.Restarts, st.PID, "", 0, false
	a.log().Info("unit running again", "unit", u.Name, "restarts", st.Restarts)
	return false
}

// crashCount is Restarts and Restarting for a service Apply finds crashed:
// restarts since Apply last started it (changed) or since the last Apply's
// watch began, counting the one the runtime is waiting to make.
func (a *Applier) crashCount(st runtime.UnitStatus, u api.Unit, changed bool) (int, bool) {
	n, again := restartNumber(st, u)
	if changed {
		return n, again
	}
	a.live.mu.Lock()
	defer a.live.mu.Unlock()
	if w := a.live.watch[u.Name]; w != nil && w.hash == u.InputHash {
		n -= w.base
	}
	return max(n, 0), again
}

// probe calls the configured health probe.
func (a *Applier) probe(ctx context.Context, url string) error {
	if a.Health != nil {
		return a.Health(ctx, url)
	}
	return a.prober.Probe(ctx, url)
}

// crashMessage says how a service went down: `exited with status 1 at
// 2026-11-29T22:40:01Z, restarting (restart 2)`. The restart number is the
// one the runtime is waiting to make (failed, in backoff) or is making or
// made (starting, running), so the message does not change between the
// backoff and the restarted process settling.
func crashMessage(st runtime.UnitStatus, u api.Unit) string {
	msg := fmt.Sprintf("exited with status %d", st.ExitCode)
	if st.ExitCode < 0 {
		msg = "killed by a signal"
	}
	if !st.LastExit.IsZero() {
		msg += " at " + st.LastExit.UTC().Format(time.RFC3339)
	}
	if st.Message != "" && st.State != runtime.StateRunning {
		msg += " (" + st.Message + ")"
	}
	n, again := restartNumber(st, u)
	if !again {
		return msg + ", not restarted (restart: " + u.Restart + ")"
	}
	return fmt.Sprintf("%s, restarting (restart %d)", msg, n)
}

// restartNumber is the runtime's restart count for a crashed service,
// counting the restart it is waiting to make (failed, in backoff), and
// whether it restarts the service at all (or already has: starting,
// running).
func restartNumber(st runtime.UnitStatus, u api.Unit) (int, bool) {
	switch {
	case st.State == runtime.StateRunning, st.State == runtime.StateStarting:
		return st.Restarts, true
	case u.Restart == api.RestartNever, u.Restart == api.RestartOnFailure && st.State == runtime.StateExited:
		return st.Restarts, false
	default:
		return st.Restarts + 1, true
	}
}

// copyReports copies reports deeply enough that changing an item of the
// copy leaves the original alone.
func copyReports(reports []api.NodeReport) []api.NodeReport {
	out := make([]api.NodeReport, len(reports))
	for i, r := range reports {
		r.Items = append([]api.ItemStatus(nil), r.Items...)
		out[i] = r
	}
	return out
}
