package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"kcore.dev/kcore/pkg/api"
)

// Controller is what the agent needs from the controller API (pkg/client's
// *Client implements it).
type Controller interface {
	NodeState(ctx context.Context, nodeID string, index uint64, wait time.Duration) ([]api.NodeState, uint64, error)
	PutFacts(ctx context.Context, nodeID string, facts api.NodeFacts) (uint64, error)
	Heartbeat(ctx context.Context, nodeID string) error
	PutReport(ctx context.Context, nodeID string, report api.NodeReport) (uint64, error)
}

// Agent is the node agent's controller loop.
type Agent struct {
	// NodeID is this node's id.
	NodeID string
	// Root is the host root (credentials are kept under it).
	Root string
	// Applier applies the NodeStates.
	Applier *Applier
	// Facts measures the node's facts.
	Facts *Collector
	// ARP are the addresses the facts check with arping.
	ARP []ARPTarget
	// Join exchanges the join token for credentials; called only when none are stored.
	Join func(ctx context.Context) (Credentials, error)
	// Connect makes the controller client from the credentials. certs is
	// nil when the credentials do not parse; otherwise the client should
	// present certs.GetClientCertificate, so a renewed certificate is used
	// without reconnecting. A client that implements Renewer is used to
	// renew the certificate at two thirds of its lifetime.
	Connect func(ctx context.Context, c Credentials, certs *CertSource) (Controller, error)
	// Log receives the loop's events.
	Log *slog.Logger

	// Intervals; zero takes the default in brackets.
	HeartbeatInterval time.Duration // [5s]
	FactsInterval     time.Duration // how often facts are measured [30s]
	FactsResend       time.Duration // unchanged facts are sent again after [5m]
	FsyncInterval     time.Duration // the fsync probe reruns after [1h]
	PollWait          time.Duration // blocking query wait [5m]
	RetryInterval     time.Duration // re-apply while items are pending [2s]
	PendingInterval   time.Duration // pending units are checked for readiness, to re-apply at once, every [250ms]
	WatchInterval     time.Duration // units are checked for crashes between applies every [1s]
	BackoffMax        time.Duration // cap of the retry backoff [30s]
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (a *Agent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// Run joins (when no credentials are stored), then heartbeats, reports
// facts and applies NodeStates until ctx ends. Failures are retried with
// capped exponential backoff; Run returns nil when ctx is cancelled.
func (a *Agent) Run(ctx context.Context) error {
	creds, err := a.credentials(ctx)
	if err != nil {
		return ignoreCancel(ctx, err)
	}
	certs, err := NewCertSource(creds)
	if err != nil {
		a.log().Warn("the stored node certificate does not parse: it is not renewed", "err", err)
		certs = nil
	}
	var ctl Controller
	if err := a.retry(ctx, "connect", func() error {
		var err error
		ctl, err = a.Connect(ctx, creds, certs)
		return err
	}); err != nil {
		return ignoreCancel(ctx, err)
	}
	rep := &reporter{nodeID: a.NodeID, log: a.log(), sent: map[string][]byte{}}
	facts := &factsSender{}
	if a.Facts != nil {
		// A unit stopped for good can free what the facts show (the VIP
		// keepalived held, a port, a disk): they are measured again before
		// any report says the unit is gone, so a plan made after that
		// report sees the node as it now is.
		a.Applier.OnRemove = func(ctx context.Context) { a.sendFacts(ctx, ctl, facts) }
	}
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); a.renewLoop(ctx, ctl, certs) }()
	go func() { defer wg.Done(); a.heartbeats(ctx, ctl) }()
	go func() { defer wg.Done(); a.reportFacts(ctx, ctl, facts) }()
	go func() { defer wg.Done(); a.watchUnits(ctx, ctl, rep) }()
	a.applyLoop(ctx, ctl, rep)
	wg.Wait()
	return nil
}

func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// credentials loads the stored credentials or joins (retrying) and stores them.
func (a *Agent) credentials(ctx context.Context) (Credentials, error) {
	c, ok, err := LoadCredentials(a.Root)
	if err != nil || ok {
		return c, err
	}
	if a.Join == nil {
		return Credentials{}, errors.New("join: no credentials stored and no join token given")
	}
	err = a.retry(ctx, "join", func() error {
		var err error
		c, err = a.Join(ctx)
		return err
	})
	if err != nil {
		return Credentials{}, err
	}
	if err := StoreCredentials(a.Root, c); err != nil {
		return Credentials{}, err
	}
	a.log().Info("joined", "node", a.NodeID)
	return c, nil
}

// retry calls fn until it succeeds or ctx ends, with capped exponential backoff.
func (a *Agent) retry(ctx context.Context, what string, fn func() error) error {
	backoff := a.firstBackoff()
	for {
		err := fn()
		if err == nil {
			return nil
		}
		a.log().Warn(what+" failed; retrying", "err", err, "in", backoff)
		if !sleep(ctx, backoff) {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		backoff = min(2*backoff, orDefault(a.BackoffMax, 30*time.Second))
	}
}

// firstBackoff is the first retry delay: 1s, or BackoffMax when smaller.
func (a *Agent) firstBackoff() time.Duration {
	return min(time.Second, orDefault(a.BackoffMax, 30*time.Second))
}

// sleep waits d or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (a *Agent) heartbeats(ctx context.Context, ctl Controller) {
	t := time.NewTicker(orDefault(a.HeartbeatInterval, 5*time.Second))
	defer t.Stop()
	for {
		if err := ctl.Heartbeat(ctx, a.NodeID); err != nil && ctx.Err() == nil {
			a.log().Warn("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// factsSender remembers what was last sent, so unchanged facts are not
// sent again, and the last fsync probe, so noise does not count as change.
// The facts ticker and the apply loop share it.
type factsSender struct {
	mu        sync.Mutex
	last      []byte
	lastSent  time.Time
	fsync     *api.FsyncLatency
	lastProbe time.Time
}

// reportFacts measures and sends the facts every FactsInterval.
func (a *Agent) reportFacts(ctx context.Context, ctl Controller, s *factsSender) {
	if a.Facts == nil {
		return
	}
	t := time.NewTicker(orDefault(a.FactsInterval, 30*time.Second))
	defer t.Stop()
	for {
		a.sendFacts(ctx, ctl, s)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sendFacts measures the facts and sends them when they changed or
// FactsResend passed. The fsync probe runs every FsyncInterval and its last
// result is reused in between.
func (a *Agent) sendFacts(ctx context.Context, ctl Controller, s *factsSender) {
	s.mu.Lock()
	defer s.mu.Unlock()
	probe := Probe{ARP: a.ARP, Fsync: s.fsync == nil || time.Since(s.lastProbe) >= orDefault(a.FsyncInterval, time.Hour)}
	f, _ := a.Facts.Collect(ctx, probe)
	if probe.Fsync && f.Fsync != nil {
		s.fsync, s.lastProbe = f.Fsync, time.Now()
	}
	f.Fsync = s.fsync
	data, _ := json.Marshal(f)
	if string(data) == string(s.last) && time.Since(s.lastSent) < orDefault(a.FactsResend, 5*time.Minute) {
		return
	}
	if _, err := ctl.PutFacts(ctx, a.NodeID, f); err != nil {
		if ctx.Err() == nil {
			a.log().Warn("report facts failed", "err", err)
		}
		return
	}
	s.last, s.lastSent = data, time.Now()
}

// applyLoop long-polls the NodeStates, applies them and reports what changed.
// While items are pending it re-applies every RetryInterval, and at once
// when a pending unit turns ready (checked every PendingInterval), so the
// report that it is ok does not wait out the interval.
func (a *Agent) applyLoop(ctx context.Context, ctl Controller, rep *reporter) {
	var (
		index   uint64
		pending bool
		kicked  bool // the last apply was a pending unit's turning ready
		states  []api.NodeState
		backoff = a.firstBackoff()
		logged  string // what the last Info "applied" said
	)
	for ctx.Err() == nil {
		wait := orDefault(a.PollWait, 5*time.Minute)
		if pending {
			wait = orDefault(a.RetryInterval, 2*time.Second)
		}
		started := time.Now()
		// After a re-apply for a ready unit that left items pending, the
		// next waits out the interval: a unit ready here but not to Apply
		// cannot make the loop spin.
		fetched, idx, ready, err := a.fetch(ctx, ctl, index, wait, pending && !kicked)
		kicked = ready
		switch {
		case ready:
			// A pending unit turned ready: apply the same states again.
			idx = index
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			a.log().Warn("fetch node state failed; retrying", "err", err, "in", backoff)
			sleep(ctx, backoff)
			backoff = min(2*backoff, orDefault(a.BackoffMax, 30*time.Second))
			continue
		default:
			backoff = time.Second
			// A server that answers an unchanged index at once must not make this spin.
			if floor := min(wait, time.Second); idx == index && time.Since(started) < floor && !sleep(ctx, floor-time.Since(started)) {
				return
			}
			states = fetched
		}
		index = idx
		t0 := time.Now()
		reports, err := a.Applier.Apply(ctx, states)
		if err != nil && ctx.Err() == nil {
			a.log().Error("apply", "err", err)
		}
		pending = Pending(reports) || err != nil
		logged = a.logApplied(ctx, logged, index, time.Since(t0), notOK(reports))
		if !rep.sendLive(ctx, ctl, a.Applier) {
			pending = true
		}
	}
}

// logApplied logs an apply's end: at Info when the states' index or the
// items not ok differ from the last Info line (last), else at Debug, so a
// unit that stays pending does not log every retry. It returns what the
// Info line, if any, said.
func (a *Agent) logApplied(ctx context.Context, last string, index uint64, took time.Duration, notOK []string) string {
	said := fmt.Sprint(index, notOK)
	level := slog.LevelDebug
	if said != last {
		level = slog.LevelInfo
	}
	a.log().Log(ctx, level, "applied", "index", index, "took", took.Round(time.Millisecond), "notOK", notOK)
	return said
}

// notOK names the items of reports that are not ok, as kind/name=state.
func notOK(reports []api.NodeReport) []string {
	var out []string
	for _, r := range reports {
		for _, it := range r.Items {
			if it.State != api.ItemOK {
				out = append(out, it.Kind+"/"+it.Name+"="+it.State)
			}
		}
	}
	return out
}

// fetch long-polls the NodeStates. While items are pending (watch) it
// also checks the pending units every PendingInterval and gives up the
// poll, reporting ready, as soon as one of them is ready.
func (a *Agent) fetch(ctx context.Context, ctl Controller, index uint64, wait time.Duration, watch bool) ([]api.NodeState, uint64, bool, error) {
	if !watch {
		states, idx, err := ctl.NodeState(ctx, a.NodeID, index, wait)
		return states, idx, false, err
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ready atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(qctx, orDefault(a.PendingInterval, 250*time.Millisecond), func() bool {
			if !a.Applier.PendingReady(qctx) {
				return false
			}
			ready.Store(true)
			cancel()
			return true
		})
	}()
	states, idx, err := ctl.NodeState(qctx, a.NodeID, index, wait)
	cancel()
	<-done
	if ready.Load() && ctx.Err() == nil {
		return nil, index, true, nil
	}
	return states, idx, false, err
}

// watchUnits sends a fresh report whenever the live state of the units
// (Applier.Live) changed since the last report: a unit that crashed between
// applies shows up as failed within about WatchInterval, and as ok again
// once it has settled. Unchanged reports are not sent.
func (a *Agent) watchUnits(ctx context.Context, ctl Controller, rep *reporter) {
	every(ctx, orDefault(a.WatchInterval, time.Second), func() bool {
		rep.sendLive(ctx, ctl, a.Applier)
		return false
	})
}

// every calls fn every d, the first time after d, until fn returns true or
// ctx ends.
func every(ctx context.Context, d time.Duration, fn func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if fn() {
			return
		}
	}
}

// reporter sends NodeReports that differ from the last one sent for their
// cluster. The apply loop and the unit watcher share it: computing the live
// reports and sending them happen under one lock, so a report built from an
// older apply is never sent after one built from a newer apply.
type reporter struct {
	nodeID string
	log    *slog.Logger
	mu     sync.Mutex
	sent   map[string][]byte
}

// sendLive sends the applier's live reports that changed; false when one failed.
func (r *reporter) sendLive(ctx context.Context, ctl Controller, ap *Applier) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := true
	for _, rp := range ap.Live(ctx) {
		data, _ := json.Marshal(rp)
		if string(r.sent[rp.Cluster]) == string(data) {
			continue
		}
		if _, err := ctl.PutReport(ctx, r.nodeID, rp); err != nil {
			if ctx.Err() == nil {
				r.log.Warn("report failed", "cluster", rp.Cluster, "err", err)
			}
			ok = false
			continue
		}
		r.sent[rp.Cluster] = data
	}
	return ok
}
