package orchestrator

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/leadership"
	"kcore.dev/kcore/pkg/store"
)

// Orchestrator drives the stored clusters. Run it on the leader only.
type Orchestrator struct {
	cfg     Config
	log     *slog.Logger
	started time.Time
	wake    chan struct{}
	// seen is the fingerprint of each cluster's inputs at its last
	// successful pass, so a wake-up reconciles only the clusters it touched.
	seen map[string]string
	// retry holds the clusters that wait on health, etcd or a failed pass.
	retry map[string]bool
	// churn times the units each cluster's agents report restarting.
	churn churnTracker
}

// New checks cfg and returns an Orchestrator.
func New(cfg Config) (*Orchestrator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Orchestrator{
		cfg:   cfg,
		log:   cfg.Logger.With("component", "orchestrator"),
		wake:  make(chan struct{}, 1),
		seen:  map[string]string{},
		retry: map[string]bool{},
	}, nil
}

// RunOnLeader runs an orchestrator from cfg while leaderCh last said true:
// it starts one when leadership is gained and cancels it when leadership is
// lost, until ctx ends or leaderCh closes.
func RunOnLeader(ctx context.Context, leaderCh <-chan bool, cfg Config) {
	leadership.Run(ctx, leaderCh, func(ctx context.Context) {
		o, err := New(cfg)
		if err != nil {
			if cfg.Logger != nil {
				cfg.Logger.Error("start orchestrator", "err", err)
			}
			return
		}
		if err := o.Run(ctx); err != nil {
			o.log.Error("orchestrator stopped", "err", err)
		}
	})
}

// Run reconciles every cluster and rolls every ClusterUpdate until ctx
// ends: once at start, whenever a cluster, Node, NodeReport or ClusterUpdate
// changes, every HealthInterval (with health checks) and, while a cluster
// waits on something, after firstRetry and then twice as long each time,
// up to RetryInterval.
func (o *Orchestrator) Run(ctx context.Context) error {
	// Catch up with everything the previous leader committed first.
	for {
		err := o.cfg.Node.Barrier(ctx)
		if err == nil {
			break
		}
		o.log.Warn("catch up with the log; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.cfg.RetryInterval):
		}
	}
	o.started = o.cfg.Now()
	o.log.Info("orchestrator started", "health_interval", o.cfg.HealthInterval)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, kind := range []string{api.KindKubernetesCluster, api.KindNode, apiv1.KindNodeReport, api.KindClusterUpdate} {
		go o.watch(wctx, kind)
	}
	go o.runBackups(wctx)
	health := time.NewTicker(o.cfg.HealthInterval)
	defer health.Stop()
	retry := time.NewTimer(o.cfg.RetryInterval)
	defer retry.Stop()
	checkHealth, retryOnly := true, false
	var wait time.Duration
	for {
		if o.pass(ctx, checkHealth, retryOnly) {
			wait = nextRetry(wait, o.cfg.RetryInterval)
			retry.Reset(wait)
		} else {
			wait = 0
		}
		checkHealth, retryOnly = false, false
		select {
		case <-ctx.Done():
			o.log.Info("orchestrator stopped")
			return nil
		case <-o.wake:
		case <-health.C:
			checkHealth = true
		case <-retry.C:
			retryOnly = true
		}
	}
}

// firstRetry is how soon a pass that wants a retry is followed by one when
// the pass before it did not: a bootstrapping cluster whose members have
// all applied waits only on its health check (the API through the VIP,
// etcd), which often passes within a second of failing.
const firstRetry = 250 * time.Millisecond

// nextRetry is the wait before the next retry when the last one waited
// last (0: the pass before wanted none): firstRetry, then doubling, up to
// limit.
func nextRetry(last, limit time.Duration) time.Duration {
	if last == 0 {
		return min(firstRetry, limit)
	}
	return min(2*last, limit)
}

// watch wakes the loop whenever an object of kind changes, through the
// store's blocking queries.
func (o *Orchestrator) watch(ctx context.Context, kind string) {
	st := o.cfg.Node.State()
	idx := st.KindIndex(kind)
	for {
		n, _ := st.Wait(ctx, kind, "", idx)
		if ctx.Err() != nil {
			return
		}
		if n != idx {
			select {
			case o.wake <- struct{}{}:
			default:
			}
		}
		idx = n
	}
}

// pass reconciles the clusters whose inputs changed (all of them with
// checkHealth; only the waiting ones with retryOnly) and reports whether any
// cluster wants a retry.
func (o *Orchestrator) pass(ctx context.Context, checkHealth, retryOnly bool) bool {
	rolling := o.rollUpdates(ctx)
	rolling = o.rollSpecs(ctx) || rolling
	st := o.cfg.Node.State()
	live := map[string]bool{}
	for _, obj := range st.List(api.KindKubernetesCluster) {
		name := obj.Name
		live[name] = true
		fp := o.fingerprint(obj)
		switch {
		case checkHealth, o.retry[name]:
		case retryOnly, o.seen[name] == fp:
			continue
		}
		again, err := o.reconcile(ctx, name, checkHealth)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			o.log.Warn("reconcile cluster", "cluster", name, "err", err)
			again = true
		}
		o.retry[name] = again
		if err == nil {
			// The fingerprint from before the pass: the pass's own writes
			// cause one more pass, which finds nothing to do.
			o.seen[name] = fp
		} else {
			delete(o.seen, name)
		}
	}
	for name := range o.seen {
		if !live[name] {
			delete(o.seen, name)
			delete(o.retry, name)
		}
	}
	for _, again := range o.retry {
		if again {
			return true
		}
	}
	return rolling
}

// fingerprint names the indexes of everything a cluster's pass reads: the
// cluster, its secret, NodeStates and reports, and its members' Nodes.
func (o *Orchestrator) fingerprint(obj store.Object) string {
	st := o.cfg.Node.State()
	var b strings.Builder
	add := func(idx uint64) {
		b.WriteString(strconv.FormatUint(idx, 10))
		b.WriteByte(',')
	}
	add(obj.ModifyIndex)
	if s, ok := st.Get(store.KindSecret, secretName(obj.Name)); ok {
		add(s.ModifyIndex)
	}
	for _, kind := range []string{api.KindNodeState, apiv1.KindNodeReport} {
		b.WriteString(kind)
		for _, x := range st.ListPrefix(kind, obj.Name+"/") {
			b.WriteString(x.Name)
			add(x.ModifyIndex)
		}
	}
	var c api.KubernetesCluster
	if json.Unmarshal(obj.Data, &c) == nil {
		for _, m := range c.Spec.Members() {
			b.WriteString(m.NodeID)
			if n, ok := st.Get(api.KindNode, m.NodeID); ok {
				add(n.ModifyIndex)
			}
		}
	}
	return b.String()
}
