package security

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// Bounds of the anonymous flood.
const (
	// floodRequests is how many anonymous failed joins the flood sends:
	// about the size of the whole audit window before retention by age.
	floodRequests = 100_000
	// floodWorkers is how many keep-alive connections send them.
	floodWorkers = 8
	// floodProbe is how many go first, checked before the rest are sent,
	// so code that writes raft per failure fails fast.
	floodProbe = 1_000
	// floodBudget bounds the whole flood.
	floodBudget = 4 * time.Minute
)

// floodLimits let the flood's volume through the per-source limiter.
func floodLimits(cfg *server.Config) {
	cfg.Anonymous.Rate = 1e9
	cfg.Anonymous.Burst = 2 * floodRequests
}

// raftLast is the leader's last raft log index.
func (e *env) raftLast() uint64 {
	return e.c.WaitLeader().Node().Raft().LastIndex()
}

// anonClient is a client without a certificate, keeping up to conns
// connections alive, dialling from local (127.0.0.1 when empty).
func (e *env) anonClient(conns int, local string) *http.Client {
	e.t.Helper()
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if local != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: e.ca.Pool(), MinVersion: tls.VersionTLS13},
		DialContext:         dialer.DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
	}
	e.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// floodBody is the i-th flood request's body: garbage for even i, a join
// with a token that does not exist for odd i.
func floodBody(i int) string {
	if i%2 == 0 {
		return `{"token": garbage ` + strconv.Itoa(i)
	}
	return `{"token":"no-such-token-` + strconv.Itoa(i) + `","nodeId":"n1"}`
}

// flood sends requests [from, to) of the flood from floodWorkers workers
// and returns the first unexpected answer or transport error.
func flood(ctx context.Context, c *http.Client, url string, from, to int) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	next.Store(int64(from))
	fail := func(err error) { errOnce.Do(func() { first = err }) }
	for range floodWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= to || ctx.Err() != nil {
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(floodBody(i)))
				if err != nil {
					fail(err)
					return
				}
				resp, err := c.Do(req)
				if err != nil {
					fail(fmt.Errorf("request %d: %w", i, err))
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				want := http.StatusBadRequest
				if i%2 == 1 {
					want = http.StatusUnauthorized
				}
				if resp.StatusCode != want {
					fail(fmt.Errorf("request %d: status %d, want %d", i, resp.StatusCode, want))
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return fmt.Errorf("flood of %d requests not done within %s: %w", to-from, floodBudget, ctx.Err())
	}
	return first
}

// TestAnonymousFloodWritesNothing sends 100,000 failed anonymous joins
// (garbage bodies and tokens that do not exist) and checks that none of
// them reached raft: the log's last index is unchanged and every audit
// entry from before the flood is still there. They are counted by reason.
func TestAnonymousFloodWritesNothing(t *testing.T) {
	e := newEnvWith(t, 1, envOptions{tweak: floodLimits})
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1")), http.StatusOK, "")
	want(t, e.call(admin, l, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: "n9", TTL: "1h"}), http.StatusOK, "")
	e.findAudit(func(a apiv1.AuditEntry) bool { return a.Route == "POST /v1/tokens" })
	before := e.audit()
	last := e.raftLast()

	ctx, cancel := context.WithTimeout(context.Background(), floodBudget)
	defer cancel()
	anon := e.anonClient(floodWorkers, "")
	url := "https://" + l.Addr + apiv1.PathJoin
	if err := flood(ctx, anon, url, 0, floodProbe); err != nil {
		t.Fatal(err)
	}
	if got := e.raftLast(); got != last {
		t.Fatalf("raft last index %d after %d anonymous failures, want %d: they must not reach raft", got, floodProbe, last)
	}
	if err := flood(ctx, anon, url, floodProbe, floodRequests); err != nil {
		t.Fatal(err)
	}
	if got := e.raftLast(); got != last {
		t.Fatalf("raft last index %d after %d anonymous failures, want %d", got, floodRequests, last)
	}

	r := e.call(admin, l, http.MethodGet, apiv1.PathAudit+"?limit="+strconv.Itoa(2*floodRequests), nil)
	want(t, r, http.StatusOK, "")
	var after []apiv1.AuditEntry
	r.decode(t, &after)
	if len(after) != len(before) {
		t.Fatalf("%d audit entries after the flood, want the %d from before it", len(after), len(before))
	}
	for i := range before {
		if after[i].ID != before[i].ID {
			t.Fatalf("audit entry %d is %+v, want %+v", i, after[i], before[i])
		}
	}
	metrics := string(e.call(admin, l, http.MethodGet, apiv1.PathMetrics, nil).body)
	for reason, n := range map[string]int{apiv1.ReasonBadRequest: floodRequests / 2, apiv1.ReasonJoinRefused: floodRequests / 2} {
		line := fmt.Sprintf("kcore_anonymous_failures_total{reason=%q} %d\n", reason, n)
		if !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %q", strings.TrimSpace(line))
		}
	}
}

// summaries returns the summary entries of the audit log.
func (e *env) summaries() []apiv1.AuditEntry {
	e.t.Helper()
	var out []apiv1.AuditEntry
	for _, a := range e.audit() {
		if a.Summary != nil {
			out = append(out, a)
		}
	}
	return out
}

// TestAnonymousSummaryAfterInterval checks that anonymous failures are
// summarised in one audit entry when the summary interval passes, and that
// an interval with nothing to summarise commits nothing.
func TestAnonymousSummaryAfterInterval(t *testing.T) {
	e := newEnvWith(t, 1, envOptions{tweak: func(cfg *server.Config) { cfg.Anonymous.SummaryInterval = 24 * time.Hour }})
	lr := e.c.WaitLeader()
	l := apiserve.Of(lr)
	anon := e.anonClient(1, "")
	for range 3 {
		want(t, e.call(anon, l, http.MethodPost, apiv1.PathJoin, "{garbage"), http.StatusBadRequest, apiv1.CodeBadRequest)
	}
	for range 2 {
		want(t, e.call(anon, l, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: "nope", NodeID: "n1"}), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	}
	want(t, e.call(anon, l, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	if s := e.summaries(); len(s) != 0 {
		t.Fatalf("summary before the interval passed: %+v", s)
	}

	e.tick(lr)
	got := e.findAudit(func(a apiv1.AuditEntry) bool { return a.Summary != nil }).Summary
	wantReasons := map[string]uint64{apiv1.ReasonBadRequest: 3, apiv1.ReasonJoinRefused: 2, apiv1.ReasonUnauthenticated: 1}
	if got.Replica != lr.ID || got.Total != 6 || fmt.Sprint(got.Reasons) != fmt.Sprint(wantReasons) {
		t.Fatalf("summary %+v, want replica %s, total 6, reasons %v", got, lr.ID, wantReasons)
	}
	if len(got.TopSources) != 1 || got.TopSources[0] != (apiv1.SourceCount{Source: "127.0.0.1", Count: 6}) || got.Sources != 1 {
		t.Fatalf("summary sources %+v (%d), want 127.0.0.1 with 6", got.TopSources, got.Sources)
	}

	// Nothing new to summarise: two more intervals commit nothing (the
	// second tick is taken only once the first was handled).
	last := e.raftLast()
	e.tick(lr)
	e.tick(lr)
	if now := e.raftLast(); now != last {
		t.Fatalf("raft last index %d after empty intervals, want %d", now, last)
	}
	if s := e.summaries(); len(s) != 1 {
		t.Fatalf("%d summary entries, want 1: %+v", len(s), s)
	}
}

// TestFollowerRefusalsAudited checks that a follower's 401s are audited
// like the leader's (summarised, committed through the leader) and its
// 403s one by one through raft.
func TestFollowerRefusalsAudited(t *testing.T) {
	e := newEnv(t, 3)
	lr := e.c.WaitLeader()
	var fr *harness.Replica
	for _, r := range e.c.Running() {
		if r != lr {
			fr = r
			break
		}
	}
	f := apiserve.Of(fr)
	anon := e.anonClient(1, "")
	for range 2 {
		want(t, e.call(anon, f, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	}
	want(t, e.call(anon, f, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: "nope", NodeID: "n1"}), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	viewer := e.client(apiv1.RoleViewer, "victor")
	want(t, e.call(viewer, f, http.MethodDelete, apiv1.ObjectPath(probeKind, "c1"), nil), http.StatusForbidden, apiv1.CodeForbidden)
	e.findAudit(func(a apiv1.AuditEntry) bool { return a.Subject == "victor" && a.Result == http.StatusForbidden })

	e.tick(fr)
	got := e.findAudit(func(a apiv1.AuditEntry) bool { return a.Summary != nil }).Summary
	wantReasons := map[string]uint64{apiv1.ReasonUnauthenticated: 2, apiv1.ReasonJoinRefused: 1}
	if got.Replica != fr.ID || got.Total != 3 || fmt.Sprint(got.Reasons) != fmt.Sprint(wantReasons) {
		t.Fatalf("follower summary %+v, want replica %s, total 3, reasons %v", got, fr.ID, wantReasons)
	}
	// The leader forwarded the join for the follower and counted nothing.
	e.tick(lr)
	e.tick(lr)
	if s := e.summaries(); len(s) != 1 {
		t.Fatalf("%d summary entries, want the follower's only: %+v", len(s), s)
	}
}

// TestAnonymousRateLimit checks the per-source token bucket: past the
// burst a source gets 429 with Retry-After, other sources and callers with
// certificates are not affected, and tokens come back with time.
func TestAnonymousRateLimit(t *testing.T) {
	const burst = 5
	e := newEnvWith(t, 1, envOptions{tweak: func(cfg *server.Config) {
		cfg.Anonymous.Rate = 1
		cfg.Anonymous.Burst = burst
	}})
	l := e.leader()
	// The term's first leader-confirmed read writes a raft barrier: do it
	// before the index is taken.
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	want(t, e.call(admin, l, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusOK, "")
	last := e.raftLast()
	anon := e.anonClient(1, "")
	badJoin := apiv1.JoinRequest{Token: "nope", NodeID: "n1"}
	for range burst {
		want(t, e.call(anon, l, http.MethodPost, apiv1.PathJoin, badJoin), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	}
	r := e.call(anon, l, http.MethodPost, apiv1.PathJoin, badJoin)
	want(t, r, http.StatusTooManyRequests, apiv1.CodeRateLimited)
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q, want 1", ra)
	}
	want(t, e.call(anon, l, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusTooManyRequests, apiv1.CodeRateLimited)

	other := e.anonClient(1, "127.0.0.2")
	want(t, e.call(other, l, http.MethodPost, apiv1.PathJoin, badJoin), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	want(t, e.call(admin, l, http.MethodGet, apiv1.ObjectPath(probeKind, ""), nil), http.StatusOK, "")

	e.clock.Advance(time.Second)
	want(t, e.call(anon, l, http.MethodPost, apiv1.PathJoin, badJoin), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
	want(t, e.call(anon, l, http.MethodPost, apiv1.PathJoin, badJoin), http.StatusTooManyRequests, apiv1.CodeRateLimited)
	if got := e.raftLast(); got != last {
		t.Fatalf("raft last index %d, want %d", got, last)
	}
	// A successful join is not refused by a fresh source's bucket, and it
	// is audited one by one as before.
	r = e.call(admin, l, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{NodeID: "n7", TTL: "1h"})
	want(t, r, http.StatusOK, "")
	var tok apiv1.TokenResponse
	r.decode(t, &tok)
	want(t, e.call(e.anonClient(1, "127.0.0.3"), l, http.MethodPost, apiv1.PathJoin, apiv1.JoinRequest{Token: tok.Token, NodeID: "n7"}), http.StatusOK, "")
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Route == "POST /v1/join" && a.Object == "Node/n7" && a.Result == http.StatusOK
	})
}
