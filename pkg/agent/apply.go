package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
	"kcore.dev/kcore/pkg/volume"
)

// Item kinds in a NodeReport.
const (
	KindVolume = "volume"
	KindFile   = "file"
	KindUnit   = "unit"
	KindTask   = "task"
)

// VolumeEnsurer ensures and purges volumes (volume.Manager in production).
type VolumeEnsurer interface {
	// Ensure creates, grows, formats and mounts one volume.
	Ensure(ctx context.Context, op api.VolumeOp) (volume.Outcome, error)
	// Purge unmounts and deletes one volume, refusing (volume.ErrNotOwned)
	// one kcore did not create.
	Purge(ctx context.Context, op api.VolumeOp) error
}

// Applier applies NodeStates: volumes, then files, then units, then the
// volumes to purge, then tasks.
// It is idempotent, and its progress (files written, units ensured, tasks
// run) is persisted under Root so a new Applier carries on where an earlier
// one stopped.
type Applier struct {
	// Root is the host root every path is resolved under.
	Root string
	// Runtime runs units.
	Runtime runtime.Runtime
	// Volumes ensures volumes; nil fails every volume item.
	Volumes VolumeEnsurer
	// Runner runs tasks.
	Runner execrun.Runner
	// BinDir is searched first for a task's bare argv[0].
	BinDir string
	// Log receives events; file contents are never logged.
	Log *slog.Logger
	// TaskTimeout bounds one task run (default 10 minutes).
	TaskTimeout time.Duration
	// UnitSettle is how long Apply waits for a (re)started unit that
	// nothing waits for to be ready before it reports it (default 5s).
	UnitSettle time.Duration
	// DependencyWait is how long the units and tasks after a (re)started
	// unit wait in the same apply for it to be ready, unless it fails
	// (default 60s); after that they are reported pending and retried.
	DependencyWait time.Duration
	// Health probes a unit's HealthURL (nil: a Prober of the Applier's own).
	Health func(ctx context.Context, url string) error
	// DrainPods, when set, stops and removes every pod sandbox of the CRI
	// at endpoint; the agent calls it before it stops for good (not
	// restarts) a unit with a CRIEndpoint, whose pods outlive it. It must
	// return in bounded time; its error is logged and reported, and the
	// unit is removed anyway. Nil leaves the pods running.
	DrainPods func(ctx context.Context, endpoint string) error
	// Rebase, when set, rewrites each NodeState before it is applied; an
	// agent whose root is not / uses render.Rebase so the processes it
	// starts read and write that root's files.
	Rebase func(*api.NodeState) *api.NodeState
	// Partial applies only the given clusters: it does not tear down
	// clusters missing from the input nor stop unknown units (offline apply).
	Partial bool
	// MaxFileBytes caps one file's decoded content (default
	// DefaultMaxFileBytes); MaxStateBytes caps all files of one NodeState
	// together (default DefaultMaxStateBytes). A NodeState past either is
	// refused as a whole.
	MaxFileBytes, MaxStateBytes int64
	// OnRemove, when set, is called at the end of an Apply that stopped a
	// unit for good (removed, torn down or swept), before that Apply's
	// reports become Live.
	OnRemove func(ctx context.Context)

	mu       sync.Mutex
	host     *confined.Dir // the root's handle every rendered path goes through
	state    *State
	rendered map[string]api.Unit // units of every NodeState being applied, by name
	live     liveState
	removed  int // units stopped for good by the running Apply
	prober   Prober
	passed   passedProbes
}

func (a *Applier) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// Pending reports whether any item of the reports is still pending or
// failed, i.e. whether another Apply soon could make progress.
func Pending(reports []api.NodeReport) bool {
	for _, r := range reports {
		for _, it := range r.Items {
			if it.State != api.ItemOK {
				return true
			}
		}
	}
	return false
}

// Apply brings the node to states (one per cluster) and reports every item.
// Item failures are in the reports; the error is for the agent's own state
// file or a cancelled context.
func (a *Applier) Apply(ctx context.Context, states []api.NodeState) ([]api.NodeReport, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.host == nil {
		host, err := confined.Open(a.Root)
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		a.host = host
	}
	if a.state == nil {
		st, err := LoadState(a.Root)
		if err != nil {
			return nil, err
		}
		a.state = st
	}
	a.removed = 0
	sorted := append([]api.NodeState{}, states...)
	if a.Rebase != nil {
		for i := range sorted {
			sorted[i] = *a.Rebase(&sorted[i])
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Cluster < sorted[j].Cluster })
	// A state that takes what another cluster on this node owns is refused
	// whole, before any of it counts as rendered.
	own := a.owners(sorted)
	refused := map[string][]api.ItemStatus{}
	a.rendered = map[string]api.Unit{}
	for _, ns := range sorted {
		if items, why := foreign(&ns, own); items != nil {
			refused[ns.Cluster] = items
			a.log().Error("refused node state", "cluster", ns.Cluster, "generation", ns.Generation, "reason", why)
			continue
		}
		for _, u := range ns.Units {
			a.rendered[u.Name] = u
		}
	}
	var reports []api.NodeReport
	var errs []error
	wanted := map[string]bool{}
	for i := range sorted {
		wanted[sorted[i].Cluster] = true
		if items, ok := refused[sorted[i].Cluster]; ok {
			reports = append(reports, api.NodeReport{NodeID: sorted[i].NodeID, Cluster: sorted[i].Cluster, ObservedGeneration: sorted[i].Generation, Items: items})
			continue
		}
		rep, err := a.applyOne(ctx, &sorted[i])
		reports = append(reports, rep)
		errs = append(errs, err)
	}
	if !a.Partial && ctx.Err() == nil {
		errs = append(errs, a.teardown(ctx, wanted), a.sweepUnits(ctx))
	}
	if f, ok := a.Runtime.(runtime.Flusher); ok && ctx.Err() == nil {
		if err := f.Flush(ctx); err != nil {
			markUnits(reports, err)
		}
	}
	errs = append(errs, a.state.save(a.Root), ctx.Err())
	if a.removed > 0 && a.OnRemove != nil && ctx.Err() == nil {
		a.OnRemove(ctx)
	}
	a.setBase(ctx, reports)
	return reports, errors.Join(errs...)
}

// markUnits fails every unit item after a runtime flush failed.
func markUnits(reports []api.NodeReport, err error) {
	for i := range reports {
		for j := range reports[i].Items {
			if reports[i].Items[j].Kind == KindUnit {
				reports[i].Items[j].State, reports[i].Items[j].Message = api.ItemFailed, err.Error()
			}
		}
	}
}

// applyOne applies one cluster's NodeState.
func (a *Applier) applyOne(ctx context.Context, ns *api.NodeState) (api.NodeReport, error) {
	rep := api.NodeReport{NodeID: ns.NodeID, Cluster: ns.Cluster, ObservedGeneration: ns.Generation}
	cs := a.state.cluster(ns.Cluster)
	files, refused, why := a.checkAll(ns)
	if len(refused) > 0 {
		rep.Items = append(refused, pendingAll(ns, "not applied: "+why)...)
		return rep, nil
	}
	rep.Items = append(rep.Items, a.applyVolumes(ctx, ns, cs)...)
	rep.Items = append(rep.Items, a.applyFiles(ns, cs, files)...)
	if err := a.state.save(a.Root); err != nil {
		return rep, err
	}
	if err := a.ensureRunDir(); err != nil {
		rep.Items = append(rep.Items, pendingAll(ns, err.Error())...)
		return rep, nil
	}
	runs, stopped, started := a.startUnits(ctx, ns, cs)
	purged := a.purgeVolumes(ctx, ns, cs)
	if err := a.state.save(a.Root); err != nil {
		return rep, err
	}
	// Tasks run while the units nothing waits for still settle.
	tasks := a.applyTasks(ctx, ns, cs, started)
	rep.Items = append(rep.Items, a.settleUnits(ctx, runs)...)
	rep.Items = append(rep.Items, stopped...)
	rep.Items = append(rep.Items, purged...)
	rep.Items = append(rep.Items, tasks...)
	if ctx.Err() == nil {
		cs.Generation = ns.Generation
	}
	return rep, a.state.save(a.Root)
}

// pendingAll lists every item of ns as pending with msg, except files and
// volumes (checkAll reports those).
func pendingAll(ns *api.NodeState, msg string) []api.ItemStatus {
	var out []api.ItemStatus
	for _, u := range ns.Units {
		out = append(out, api.ItemStatus{Kind: KindUnit, Name: u.Name, State: api.ItemPending, Message: msg})
	}
	for _, t := range ns.Tasks {
		out = append(out, api.ItemStatus{Kind: KindTask, Name: t.Name, State: api.ItemPending, Message: msg})
	}
	return out
}

func (a *Applier) applyVolumes(ctx context.Context, ns *api.NodeState, cs *ClusterState) []api.ItemStatus {
	var items []api.ItemStatus
	for _, v := range ns.Volumes {
		it := api.ItemStatus{Kind: KindVolume, Name: v.Name, State: api.ItemOK}
		switch {
		case ctx.Err() != nil:
			it.State, it.Message = api.ItemPending, "interrupted"
		case a.Volumes == nil:
			it.State, it.Message = api.ItemFailed, "this agent has no volume manager"
		default:
			out, err := a.Volumes.Ensure(ctx, v)
			if err != nil {
				it.State, it.Message = api.ItemFailed, err.Error()
				a.log().Error("ensure volume", "volume", v.Name, "err", err)
				break
			}
			cs.Volumes[v.Name] = v.SizeBytes
			delete(cs.Purged, v.Name)
			it.Message = outcomeMessage(out)
		}
		items = append(items, it)
	}
	return items
}

func outcomeMessage(o volume.Outcome) string {
	var parts []string
	for _, p := range []struct {
		on   bool
		word string
	}{{o.Created, "created"}, {o.Grown, "grown"}, {o.Formatted, "formatted"}, {o.Mounted, "mounted"}, {o.FSGrown, "filesystem grown"}} {
		if p.on {
			parts = append(parts, p.word)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprint(parts)
}

func (a *Applier) applyFiles(ns *api.NodeState, cs *ClusterState, files map[string]checkedFile) []api.ItemStatus {
	var items []api.ItemStatus
	want := map[string]bool{}
	for _, f := range ns.Files {
		want[f.Path] = true
		it := api.ItemStatus{Kind: KindFile, Name: f.Path, State: api.ItemOK}
		c := files[f.Path]
		err := c.err
		wrote := false
		if err == nil {
			wrote, err = writeFile(a.host, c.rel, f, c.decoded)
		}
		if err != nil {
			it.State, it.Message = api.ItemFailed, err.Error()
			a.log().Error("write file", "path", f.Path, "err", err)
		} else {
			cs.Files[f.Path] = FileRecord{SHA256: contentHash(f.Content), Mode: uint32(fileMode(f))}
			if wrote {
				it.Message = "written"
				a.log().Info("wrote file", "path", f.Path, "secret", f.Secret)
			}
		}
		items = append(items, it)
	}
	for _, p := range sortedKeys(cs.Files) {
		if want[p] {
			continue
		}
		if err := a.removeRecorded(p); err != nil {
			items = append(items, api.ItemStatus{Kind: KindFile, Name: p, State: api.ItemFailed, Message: err.Error()})
			continue
		}
		delete(cs.Files, p)
	}
	return items
}

// removeRecorded deletes a file kcore wrote earlier through the root's
// handle. A recorded path the allow-list no longer takes (one an older
// agent wrote into its own directory) is forgotten, not touched.
func (a *Applier) removeRecorded(hostPath string) error {
	rel, err := Resolve(hostPath)
	if errors.Is(err, ErrPathNotAllowed) {
		a.log().Warn("forget recorded file outside the allow-list", "path", hostPath, "err", err)
		return nil
	}
	if err != nil {
		return err
	}
	a.log().Info("remove file", "path", hostPath)
	return a.host.Remove(rel)
}

// teardown removes the units and files of clusters no longer rendered for this node.
func (a *Applier) teardown(ctx context.Context, wanted map[string]bool) error {
	var errs []error
	for _, name := range sortedKeys(a.state.Clusters) {
		if wanted[name] {
			continue
		}
		cs := a.state.cluster(name)
		for _, u := range removeOrder(cs) {
			// A failed drain is logged; the cluster is removed anyway.
			_ = a.drainUnit(ctx, cs, u)
			if err := a.removeUnit(ctx, cs, u); err != nil {
				errs = append(errs, err)
			}
		}
		for _, p := range sortedKeys(cs.Files) {
			if err := a.removeRecorded(p); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(cs.Files, p)
		}
		if len(cs.Units) == 0 && len(cs.Files) == 0 {
			a.log().Info("cluster removed from this node", "cluster", name)
			delete(a.state.Clusters, name)
		}
	}
	return errors.Join(errs...)
}

// sweepUnits stops units the runtime runs that no cluster wants (left over
// from an agent that died between starting a unit and recording it).
func (a *Applier) sweepUnits(ctx context.Context) error {
	names, err := a.Runtime.List(ctx)
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	for _, cs := range a.state.Clusters {
		for u := range cs.Units {
			wanted[u] = true
		}
	}
	var errs []error
	for _, n := range names {
		if !wanted[n] {
			a.log().Info("stop unit no cluster wants", "unit", n)
			errs = append(errs, a.Runtime.Stop(ctx, n))
			a.removed++
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
