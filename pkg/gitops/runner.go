package gitops

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/leadership"
	"kcore.dev/kcore/pkg/store"
)

// DefaultTick is how often the runner looks for sources that are due when
// nothing wakes it earlier.
const DefaultTick = 5 * time.Second

// Planner is the controller's plan-and-apply seam: pkg/server's Server
// serves it with the code behind POST /v1/plan and POST /v1/apply.
type Planner interface {
	// PlanGit computes the plan of req against the current stored state.
	PlanGit(req apiv1.PlanRequest) (*apiv1.PlanResponse, error)
	// ApplyGit commits the plan resp of req, stamping stamp on what it writes.
	ApplyGit(ctx context.Context, stamp apiv1.GitStamp, req apiv1.PlanRequest, resp *apiv1.PlanResponse) (uint64, error)
	// WriteGitStatus stores a source's status with CAS on its modify index.
	WriteGitStatus(ctx context.Context, name string, st api.GitSourceStatus, expect uint64) (uint64, error)
}

// State is the replicated store the runner reads.
type State interface {
	Get(kind, name string) (store.Object, bool)
	List(kind string) []store.Object
	Wait(ctx context.Context, kind, name string, afterIndex uint64) (uint64, error)
}

// Config is what a Runner needs.
type Config struct {
	State   State
	Planner Planner
	Fetcher Fetcher
	Logger  *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Tick is how often due sources are looked for; 0 is DefaultTick.
	Tick time.Duration
}

// Runner follows every GitSource while its replica leads.
type Runner struct {
	cfg Config
	log *slog.Logger
	// fetched is when each source was last fetched by this leader.
	fetched map[string]time.Time
}

// New returns a Runner.
func New(cfg Config) *Runner {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, log: cfg.Logger.With("component", "gitops"), fetched: map[string]time.Time{}}
}

// RunOnLeader runs a fresh Runner each time leaderCh says this replica
// leads, and stops it when it no longer does or ctx ends.
func RunOnLeader(ctx context.Context, leaderCh <-chan bool, cfg Config) {
	leadership.Run(ctx, leaderCh, func(ctx context.Context) { New(cfg).Run(ctx) })
}

// Run syncs due sources until ctx ends; a write to any GitSource (add,
// sync, approve) wakes it at once.
func (r *Runner) Run(ctx context.Context) {
	var seen uint64
	for ctx.Err() == nil {
		r.Pass(ctx)
		wctx, cancel := context.WithTimeout(ctx, r.cfg.Tick)
		if idx, err := r.cfg.State.Wait(wctx, api.KindGitSource, "", seen); err == nil {
			seen = idx
		}
		cancel()
	}
}

// Pass syncs every source that is due once.
func (r *Runner) Pass(ctx context.Context) {
	for _, o := range r.cfg.State.List(api.KindGitSource) {
		if ctx.Err() != nil {
			return
		}
		var g api.GitSource
		if err := json.Unmarshal(o.Data, &g); err != nil {
			r.log.Error("decode git source", "name", o.Name, "err", err)
			continue
		}
		var expect uint64
		if so, ok := r.cfg.State.Get(api.KindGitSourceStatus, o.Name); ok {
			expect = so.ModifyIndex
			if err := json.Unmarshal(so.Data, &g.Status); err != nil {
				r.log.Error("decode git source status", "name", o.Name, "err", err)
				continue
			}
		}
		if !r.due(g) {
			continue
		}
		st := r.sync(ctx, g)
		if _, err := r.cfg.Planner.WriteGitStatus(ctx, g.Metadata.Name, st, expect); err != nil {
			r.log.Warn("write git source status", "name", g.Metadata.Name, "err", err)
		}
	}
}

// due reports whether g should be fetched now: its interval passed since
// this leader last fetched it, a sync was asked for, or its pending plan
// was approved.
func (r *Runner) due(g api.GitSource) bool {
	last, ok := r.fetched[g.Metadata.Name]
	switch {
	case !ok, g.Requests.Sync > g.Status.SyncHandled:
		return true
	case approved(g, g.Status.Pending):
		return true
	}
	return !r.cfg.Now().Before(last.Add(g.Spec.IntervalDuration()))
}
