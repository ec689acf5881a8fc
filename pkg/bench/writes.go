package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/ctlproc"
	"kcore.dev/kcore/pkg/store"
)

// benchKind is the kind the write figure stores: any kind outside the object
// model is one JSON value, decoded and stored through the real write path.
const benchKind = "BenchObject"

// keysPerWriter bounds the key space: each writer cycles over this many keys.
const keysPerWriter = 64

// payload1K is a 1 KiB JSON object.
func payload1K() []byte {
	const size = 1024
	prefix, suffix := `{"data":"`, `"}`
	return []byte(prefix + strings.Repeat("x", size-len(prefix)-len(suffix)) + suffix)
}

// writeSample is one run of both systems at one client count. bolt is
// ours again on a second cluster whose replicas keep the raft log in bbolt
// (--log-store bolt) instead of the default WAL, run right after ours so
// both see the same machine. raw is the same load applied straight to the
// leader's raft node of an in-process cluster as a bare put (no HTTP, TLS
// or audit entry) and rawAudit as the server commits it: the put and its
// audit entry in one store.Batch, one raft entry. They split the write
// path's cost.
type writeSample struct {
	ours, bolt, etcd, raw, rawAudit loadResult
}

// writeBench drives figure 1.
type writeBench struct {
	// ours and bolt are three kcore-controller processes each, as etcd's
	// members are three processes: each replica has its own heap and
	// garbage collector, apart from the clients'.
	ours *writeCluster
	bolt *writeCluster // nil: the bolt comparison is not measured
	// startSplit starts the in-process cluster one run's diagnostic split
	// rows apply to, and returns what removes it again (nil: not
	// measured). Each run has a fresh one, so the state the split writes
	// never piles up in the heap the clients of both systems share.
	startSplit func(ctx context.Context, name string) (*inprocCluster, func(), error)
	etcd       *etcdCluster
	auth       *ctlproc.Authority
	warmup     time.Duration
	duration   time.Duration
}

// writeCluster is one three-process controller cluster figure 1 writes to.
type writeCluster struct {
	procs *procCluster
	admin *client.Client
}

// startWriteCluster starts three kcore-controller processes under root with
// the flags extra.
func startWriteCluster(ctx context.Context, bin, root string, auth *ctlproc.Authority, extra ...string) (*writeCluster, error) {
	p, admin, err := startProcs(ctx, bin, root, auth, extra...)
	if err != nil {
		return nil, err
	}
	return &writeCluster{procs: p, admin: admin}, nil
}

func (w *writeCluster) close() {
	w.admin.Close()
	w.procs.close()
}

// oursOps returns n writers, each a client.Client of its own (its own
// transport and TLS connection) to the leader's API of cl.
func (b *writeBench) oursOps(ctx context.Context, cl *writeCluster, n int) ([]op, func(), error) {
	leader, err := cl.procs.waitLeader(ctx, cl.admin)
	if err != nil {
		return nil, nil, fmt.Errorf("controller writes: %w", err)
	}
	cfg, err := b.auth.ClientConfig([]string{leader.api}, apiv1.RoleClusterAdmin, "bench-writer")
	if err != nil {
		return nil, nil, err
	}
	body := json.RawMessage(payload1K())
	var clients []*client.Client
	ops := make([]op, n)
	for i := range n {
		c, err := client.New(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("controller writes: %w", err)
		}
		clients = append(clients, c)
		ops[i] = func(ctx context.Context, seq int) error {
			_, err := c.Put(ctx, benchKind, fmt.Sprintf("w%03d-%02d", i, seq%keysPerWriter), body, nil)
			return err
		}
	}
	return ops, func() {
		for _, c := range clients {
			c.Close()
		}
	}, nil
}

// etcdOps returns n writers, each a clientv3.Client of its own (its own
// gRPC connection) to the leader member.
func (b *writeBench) etcdOps(ctx context.Context, n int) ([]op, func(), error) {
	ep, err := b.etcd.leader(ctx)
	if err != nil {
		return nil, nil, err
	}
	val := string(payload1K())
	var clients []*clientv3.Client
	closeAll := func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}
	ops := make([]op, n)
	for i := range n {
		c, err := b.etcd.newClient([]string{ep})
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		clients = append(clients, c)
		ops[i] = func(ctx context.Context, seq int) error {
			_, err := c.Put(ctx, fmt.Sprintf("w%03d-%02d", i, seq%keysPerWriter), val)
			return err
		}
	}
	return ops, closeAll, nil
}

// rawOps returns n writers that apply straight to the leader's raft node
// what the server applies after decoding a PUT: a bare put, or (audit) the
// put and its audit entry in one store.Batch, as the server commits them.
func (b *writeBench) rawOps(ctx context.Context, cl *inprocCluster, n int, audit bool) ([]op, error) {
	leader, err := cl.waitLeader(ctx)
	if err != nil {
		return nil, err
	}
	body := json.RawMessage(payload1K())
	ops := make([]op, n)
	for i := range n {
		ops[i] = func(ctx context.Context, seq int) error {
			put := store.Put{Kind: benchKind, Name: fmt.Sprintf("r%03d-%02d", i, seq%keysPerWriter), Data: body}
			var cmd store.Command
			var err error
			if audit {
				cmd, err = auditedPut(put, i)
			} else {
				cmd, err = put.Command()
			}
			if err != nil {
				return err
			}
			cmd.Time = time.Now().UTC().Format(time.RFC3339Nano)
			res, err := leader.Node().Apply(ctx, cmd)
			if err != nil {
				return err
			}
			return res.Err
		}
	}
	return ops, nil
}

// splitRun measures the split rows on cl: bare puts, then puts with their
// audit entry, half the duration each.
func (b *writeBench) splitRun(ctx context.Context, cl *inprocCluster, n int) (raw, rawAudit loadResult, err error) {
	ops, err := b.rawOps(ctx, cl, n, false)
	if err != nil {
		return raw, rawAudit, err
	}
	raw = runLoad(ctx, ops, b.warmup, b.duration/2)
	if ops, err = b.rawOps(ctx, cl, n, true); err != nil {
		return raw, rawAudit, err
	}
	return raw, runLoad(ctx, ops, b.warmup, b.duration/2), nil
}

// auditedPut is the command the server commits for a PUT: the put and an
// audit entry like the server's in one store.Batch.
func auditedPut(put store.Put, writer int) (store.Command, error) {
	e, err := json.Marshal(apiv1.AuditEntry{
		Time: time.Now().UTC().Format(time.RFC3339Nano), ID: fmt.Sprintf("bench-%d", writer),
		Subject: "bench-writer", Role: apiv1.RoleClusterAdmin, Method: "PUT",
		Route: "PUT /v1/objects/{kind}/{name...}", Object: benchKind + "/" + put.Name, Result: 200,
	})
	if err != nil {
		return store.Command{}, err
	}
	return store.Batch{Ops: []store.Op{{Put: &put}}, Audit: &store.AppendAudit{Entry: e}}.Command()
}

// runOne runs every system once at n clients. On odd runs the bolt
// cluster goes before ours, so neither log store always runs second.
func (b *writeBench) runOne(ctx context.Context, run, n int) (writeSample, error) {
	var s writeSample
	clusters := []*writeCluster{b.ours}
	results := []*loadResult{&s.ours}
	if b.bolt != nil {
		clusters, results = append(clusters, b.bolt), append(results, &s.bolt)
		if run%2 == 1 {
			clusters[0], clusters[1] = clusters[1], clusters[0]
			results[0], results[1] = results[1], results[0]
		}
	}
	for i, cl := range clusters {
		ops, done, err := b.oursOps(ctx, cl, n)
		if err != nil {
			return s, err
		}
		*results[i] = runLoad(ctx, ops, b.warmup, b.duration)
		done()
	}
	if b.startSplit != nil {
		cl, remove, err := b.startSplit(ctx, fmt.Sprintf("run%d-clients%d", run+1, n))
		if err != nil {
			return s, err
		}
		s.raw, s.rawAudit, err = b.splitRun(ctx, cl, n)
		remove()
		if err != nil {
			return s, err
		}
	}
	if b.etcd != nil {
		ops, done, err := b.etcdOps(ctx, n)
		if err != nil {
			return s, err
		}
		s.etcd = runLoad(ctx, ops, b.warmup, b.duration)
		done()
	}
	return s, nil
}

// writeFigures runs every client count runs times (interleaving ours and
// etcd so both see the same noise) and returns three rows per count.
func (b *writeBench) figures(ctx context.Context, counts []int, runs int, progress func(string)) ([]Figure, error) {
	samples := map[int][]writeSample{}
	for r := range runs {
		for _, n := range counts {
			s, err := b.runOne(ctx, r, n)
			if err != nil {
				return nil, err
			}
			line := fmt.Sprintf("writes run %d clients %d: ours %.0f/s p99 %.1f ms (%d errors); raft only %.0f/s, raft put + audit %.0f/s",
				r+1, n, s.ours.rate(), LatenciesOf(s.ours.lats).P99, s.ours.errs, s.raw.rate(), s.rawAudit.rate())
			if b.bolt != nil {
				line += fmt.Sprintf("; bolt log store %.0f/s p99 %.1f ms (%d errors)", s.bolt.rate(), LatenciesOf(s.bolt.lats).P99, s.bolt.errs)
			}
			if b.etcd != nil {
				line += fmt.Sprintf("; etcd %.0f/s p99 %.1f ms (%d errors)", s.etcd.rate(), LatenciesOf(s.etcd.lats).P99, s.etcd.errs)
			}
			progress(line + "; " + b.raftStats(ctx))
			samples[n] = append(samples[n], s)
		}
	}
	var out []Figure
	for _, n := range counts {
		out = append(out, writeRows(n, samples[n], b.etcd != nil)...)
		if b.bolt != nil {
			out = append(out, boltRows(n, samples[n])...)
		}
		if b.startSplit != nil {
			out = append(out, rawRows(n, samples[n])...)
		}
	}
	return out, nil
}

func writeRows(n int, ss []writeSample, withEtcd bool) []Figure {
	var or, er, o50, e50, o99, e99 []float64
	errs := 0
	for _, s := range ss {
		ol, el := LatenciesOf(s.ours.lats), LatenciesOf(s.etcd.lats)
		or, er = append(or, s.ours.rate()), append(er, s.etcd.rate())
		o50, e50 = append(o50, ol.P50), append(e50, el.P50)
		o99, e99 = append(o99, ol.P99), append(e99, el.P99)
		errs += s.ours.errs + s.etcd.errs
	}
	id := fmt.Sprintf("1/%d", n)
	rate := measured(id, fmt.Sprintf("controller writes, %d clients", n), "writes/s", or)
	p50 := measured(id, fmt.Sprintf("controller write p50, %d clients", n), "ms", o50)
	p99 := measured(id, fmt.Sprintf("controller write p99, %d clients", n), "ms", o99)
	if !withEtcd {
		note := "etcd reference not measured: no etcd binary"
		return []Figure{rate.withNote(note), p50.withNote(note), p99.withNote(note)}
	}
	ref := "etcd 3.7.3"
	rate = rate.withReference(ref, Median(er))
	p50 = p50.withReference(ref, Median(e50))
	p99 = p99.withReference(ref, Median(e99))
	if n >= 64 {
		rate = rate.withTarget("ratio >= 1.0", rate.Ratio != nil && *rate.Ratio >= 1.0)
		p99 = p99.withTarget("p99 <= etcd's", p99.Value != nil && p99.Reference != nil && *p99.Value <= *p99.Reference)
	}
	if errs > 0 {
		rate = rate.withNote(fmt.Sprintf("%d failed requests over all runs", errs))
	}
	return []Figure{rate, p50, p99}
}

// boltRows compare the raft log stores: ours with the bbolt log, against
// ours with the default WAL in the same run.
func boltRows(n int, ss []writeSample) []Figure {
	var br, or, b99, o99 []float64
	errs := 0
	for _, s := range ss {
		br, or = append(br, s.bolt.rate()), append(or, s.ours.rate())
		b99, o99 = append(b99, LatenciesOf(s.bolt.lats).P99), append(o99, LatenciesOf(s.ours.lats).P99)
		errs += s.bolt.errs
	}
	id := fmt.Sprintf("1/%d", n)
	ref := "wal log store, same run"
	note := "log store comparison: the same writes to a second 3-replica cluster with --log-store bolt, run right after the wal cluster's"
	if errs > 0 {
		note += fmt.Sprintf("; %d failed requests over all runs", errs)
	}
	return []Figure{
		measured(id, fmt.Sprintf("  bolt log store: controller writes, %d clients", n), "writes/s", br).withReference(ref, Median(or)).withNote(note),
		measured(id, fmt.Sprintf("  bolt log store: controller write p99, %d clients", n), "ms", b99).withReference(ref, Median(o99)).withNote(note),
	}
}

// rawRows are the diagnostic split: the same writes applied straight to
// the leader's raft node.
func rawRows(n int, ss []writeSample) []Figure {
	var rate, p50, arate, ap50 []float64
	for _, s := range ss {
		rate = append(rate, s.raw.rate())
		p50 = append(p50, LatenciesOf(s.raw.lats).P50)
		arate = append(arate, s.rawAudit.rate())
		ap50 = append(ap50, LatenciesOf(s.rawAudit.lats).P50)
	}
	id := fmt.Sprintf("1/%d", n)
	note := "diagnostic: raftnode.Apply of a bare put on the leader, no HTTP, TLS, JSON decode or audit entry"
	anote := "diagnostic: raftnode.Apply of the put and its audit entry in one store.Batch (one raft entry), as the server commits a PUT; no HTTP or TLS"
	return []Figure{
		measured(id, fmt.Sprintf("  split: raft apply only, %d clients", n), "writes/s", rate).withNote(note),
		measured(id, fmt.Sprintf("  split: raft apply only p50, %d clients", n), "ms", p50).withNote(note),
		measured(id, fmt.Sprintf("  split: raft apply of put + audit, %d clients", n), "writes/s", arate).withNote(anote),
		measured(id, fmt.Sprintf("  split: raft apply of put + audit p50, %d clients", n), "ms", ap50).withNote(anote),
	}
}

// raftStats says which replica leads and where its log is, so a slow run
// can be matched with an election.
func (b *writeBench) raftStats(ctx context.Context) string {
	l, last, err := b.ours.procs.leader(ctx, b.ours.admin)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("leader controller-%d last_log_index %d", l.index, last)
}
