package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/ctlproc"
	"kcore.dev/kcore/pkg/raftnode"
)

// Figure groups Options.Only selects.
const (
	GroupFloor       = "floor"
	GroupWrites      = "writes"
	GroupPropagation = "propagation"
	GroupFleet       = "fleet"
	GroupPlan        = "plan"
	GroupFailover    = "failover"
	GroupLab         = "lab"
)

// Groups lists every figure group in run order.
func Groups() []string {
	return []string{GroupFloor, GroupWrites, GroupPropagation, GroupPlan, GroupFleet, GroupFailover, GroupLab}
}

// Options shape a bench run. Zero values take the defaults of make bench.
type Options struct {
	// DataDir holds every replica's and member's data; default a new temp
	// dir, removed afterwards.
	DataDir string
	// EtcdBin is the etcd binary; empty leaves figure 1's reference out.
	EtcdBin string
	// ControllerBin is the kcore-controller binary figures 1, 3 and 5a run.
	ControllerBin string
	// Only runs these groups (see Groups); empty runs all.
	Only []string
	// Runs is how many runs each write configuration gets (default 3).
	Runs int
	// Clients are figure 1's client counts (default 1, 64, 256).
	Clients []int
	// WriteWarmup and WriteDuration shape one write run (default 1 s, 10 s).
	WriteWarmup, WriteDuration time.Duration
	// Agents and Rounds shape figure 2 (default 100 agents, 10 rounds).
	Agents, Rounds int
	// FleetSizes are figure 3's fleet sizes, run smallest first (default
	// 1,000 and 5,000 agents); FleetWindows and FleetWindow shape each
	// size's measurement (default 3 windows of 30 s).
	FleetSizes   []int
	FleetWindows int
	FleetWindow  time.Duration
	// PlanIterations is figure 4's iteration count (default 20).
	PlanIterations int
	// FailoverRuns is figure 5a's run count (default 5).
	FailoverRuns int
	// Lab shapes figures 5b, 5c, 6 and 7 (group lab).
	Lab LabOptions
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Logger receives the in-process replicas' logs; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Runs, 3)
	def(&o.Agents, 100)
	def(&o.Rounds, 10)
	def(&o.FleetWindows, 3)
	def(&o.PlanIterations, 20)
	def(&o.FailoverRuns, 5)
	def(&o.Lab.Runs, 3)
	defD(&o.Lab.LockWait, 5*time.Minute)
	defD(&o.WriteWarmup, time.Second)
	defD(&o.WriteDuration, 10*time.Second)
	defD(&o.FleetWindow, 30*time.Second)
	if len(o.Clients) == 0 {
		o.Clients = []int{1, 64, 256}
	}
	if len(o.FleetSizes) == 0 {
		o.FleetSizes = []int{1000, 5000}
	}
	if len(o.Only) == 0 {
		o.Only = Groups()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Run measures every selected figure and returns the report. A figure that
// fails is reported as not measured with its error; Run fails only when
// it cannot start at all.
func Run(ctx context.Context, o Options) (Report, error) {
	o = o.withDefaults()
	for _, g := range o.Only {
		if !slices.Contains(Groups(), g) {
			return Report{}, fmt.Errorf("run bench: unknown figure group %q (known: %v)", g, Groups())
		}
	}
	if o.DataDir == "" {
		dir, err := os.MkdirTemp("", "kcore-bench-")
		if err != nil {
			return Report{}, fmt.Errorf("run bench: %w", err)
		}
		defer os.RemoveAll(dir)
		o.DataDir = dir
	}
	r := &runner{o: o, rep: Report{Machine: readMachine(), Started: stamp(time.Now())}}
	r.progress("machine: %s", r.rep.Machine)
	want := func(g string) bool { return slices.Contains(o.Only, g) }
	if want(GroupFloor) {
		r.add("0", "physical floor", func() ([]Figure, error) { return floorFigures(ctx, o.DataDir, 3) })
	}
	if want(GroupWrites) || want(GroupPropagation) {
		r.inprocFigures(ctx, want(GroupWrites), want(GroupPropagation))
	}
	if want(GroupPlan) {
		r.add("4", "plan and render at size", func() ([]Figure, error) { return planRenderFigures(o.PlanIterations) })
	}
	if want(GroupFleet) || want(GroupFailover) {
		r.procFigures(ctx, want(GroupFleet), want(GroupFailover))
	}
	if want(GroupLab) {
		r.labFigures(ctx)
	}
	slices.SortStableFunc(r.rep.Figures, func(a, b Figure) int { return figureNumber(a.ID) - figureNumber(b.ID) })
	r.rep.Machine.LoadEnd = loadAvg()
	r.rep.Finished = stamp(time.Now())
	return r.rep, nil
}

// runner accumulates figures and turns failures into rows.
type runner struct {
	o   Options
	rep Report
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.o.Progress, "[bench %s] %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// add runs one figure group; an error becomes a not-measured row.
func (r *runner) add(id, name string, f func() ([]Figure, error)) {
	r.progress("figure %s: %s", id, name)
	start := time.Now()
	figs, err := f()
	if err != nil {
		r.progress("figure %s failed: %v", id, err)
		r.rep.Figures = append(r.rep.Figures, notMeasured(id, name, err.Error()))
		return
	}
	r.progress("figure %s done in %s", id, time.Since(start).Round(time.Second))
	r.rep.Figures = append(r.rep.Figures, figs...)
}

// inprocFigures runs figure 2 on three in-process replicas, and figure 1.
func (r *runner) inprocFigures(ctx context.Context, writes, propagation bool) {
	root := filepath.Join(r.o.DataDir, "inproc")
	auth, err := ctlproc.NewAuthority("bench inproc")
	if err == nil {
		var cl *inprocCluster
		cl, err = startInproc(ctx, root, auth, r.o.Logger, "")
		if err == nil {
			defer cl.close()
			if writes {
				r.add("1", "controller writes vs etcd", func() ([]Figure, error) { return r.writeFigures(ctx, auth) })
			}
			if propagation {
				r.add("2", "change propagation", func() ([]Figure, error) {
					return propagationFigures(ctx, cl, auth, r.o.Agents, r.o.Rounds)
				})
			}
			return
		}
	}
	r.progress("in-process controllers: %v", err)
	if writes {
		r.rep.Figures = append(r.rep.Figures, notMeasured("1", "controller writes vs etcd", err.Error()))
	}
	if propagation {
		r.rep.Figures = append(r.rep.Figures, notMeasured("2", "change propagation", err.Error()))
	}
}

// writeFigures runs figure 1: writes to three kcore-controller processes
// (and, beside them, to three more with the bolt log store) against three
// etcd processes, with the split rows on in-process replicas started for
// each run.
func (r *runner) writeFigures(ctx context.Context, auth *ctlproc.Authority) ([]Figure, error) {
	if r.o.ControllerBin == "" {
		return nil, errors.New("no kcore-controller binary given")
	}
	b := &writeBench{auth: auth, warmup: r.o.WriteWarmup, duration: r.o.WriteDuration}
	b.startSplit = func(ctx context.Context, name string) (*inprocCluster, func(), error) {
		root := filepath.Join(r.o.DataDir, "writes-split", name)
		cl, err := startInproc(ctx, root, auth, r.o.Logger, "")
		if err != nil {
			return nil, nil, fmt.Errorf("start the split rows' in-process replicas: %w", err)
		}
		return cl, func() {
			cl.close()
			_ = os.RemoveAll(root)
		}, nil
	}
	ours, err := startWriteCluster(ctx, r.o.ControllerBin, filepath.Join(r.o.DataDir, "writes-wal"), auth)
	if err != nil {
		return nil, fmt.Errorf("start the controller processes: %w", err)
	}
	defer ours.close()
	b.ours = ours
	bolt, err := startWriteCluster(ctx, r.o.ControllerBin, filepath.Join(r.o.DataDir, "writes-bolt"), auth, "--log-store", raftnode.LogStoreBolt)
	if err != nil {
		return nil, fmt.Errorf("start the bolt log store cluster: %w", err)
	}
	defer bolt.close()
	b.bolt = bolt
	if r.o.EtcdBin != "" {
		e, err := startEtcd(ctx, r.o.EtcdBin, filepath.Join(r.o.DataDir, "etcd"), auth)
		if err != nil {
			return nil, err
		}
		defer e.close()
		b.etcd = e
	}
	return b.figures(ctx, r.o.Clients, r.o.Runs, func(s string) { r.progress("%s", s) })
}

// procFigures runs figures 3 and 5a on three kcore-controller processes.
func (r *runner) procFigures(ctx context.Context, fleet, failover bool) {
	fail := func(err error) {
		r.progress("controller processes: %v", err)
		if fleet {
			r.rep.Figures = append(r.rep.Figures, notMeasured("3", "simulated nodes", err.Error()))
		}
		if failover {
			r.rep.Figures = append(r.rep.Figures, notMeasured("5a", "failover", err.Error()))
		}
	}
	if r.o.ControllerBin == "" {
		fail(errors.New("no kcore-controller binary given"))
		return
	}
	auth, err := ctlproc.NewAuthority("bench processes")
	if err != nil {
		fail(err)
		return
	}
	p, c, err := startProcs(ctx, r.o.ControllerBin, filepath.Join(r.o.DataDir, "procs"), auth)
	if err != nil {
		fail(err)
		return
	}
	defer p.close()
	defer c.Close()
	say := func(s string) { r.progress("%s", s) }
	if fleet {
		r.add("3", "simulated nodes", func() ([]Figure, error) {
			return fleetFigures(ctx, p, c, auth, r.o.FleetSizes, r.o.FleetWindows, r.o.FleetWindow, say)
		})
	}
	if failover {
		r.add("5a", "failover", func() ([]Figure, error) { return failoverFigures(ctx, p, c, auth, r.o.FailoverRuns, say) })
	}
}

// figureNumber is the leading number of a figure id ("1/64" → 1, "5a" → 5).
func figureNumber(id string) int {
	n := 0
	for _, c := range id {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// labFigures runs figures 5b, 5c, 6 and 7 in the lab; when the lab cannot run
// here (not root, binaries missing, lock busy) each is a row saying why.
func (r *runner) labFigures(ctx context.Context) {
	r.progress("figures 5b, 5c, 6 and 7: the lab")
	start := time.Now()
	figs, err := labFigures(ctx, r.o.Lab, r.o.DataDir, func(s string) { r.progress("%s", s) })
	if err != nil {
		r.progress("lab figures not measured: %v", err)
		why := err.Error()
		if first, _, ok := strings.Cut(why, "\n"); ok {
			why = first
		}
		r.rep.Figures = append(r.rep.Figures,
			notMeasured("5b", "VIP move after keepalived / only kube-apiserver is killed on the holder", why),
			notMeasured("5c", l2Name, why),
			notMeasured("6", "time to ready vs hand-started etcd + kube-apiserver", why),
			notMeasured("7", "rolling control-plane update and the /readyz gap through the VIP", why),
		)
		return
	}
	r.progress("figures 5b, 5c, 6 and 7 done in %s", time.Since(start).Round(time.Second))
	r.rep.Figures = append(r.rep.Figures, figs...)
}
