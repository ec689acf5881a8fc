package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Bounds of the cluster invariants sampled while a scenario changes the
// cluster.
const (
	// invariantEvery is how often every invariant is sampled.
	invariantEvery = 100 * time.Millisecond
	// invariantTimeout bounds each request of one sample.
	invariantTimeout = 500 * time.Millisecond
	// etcdElectionBound is how long etcd may answer unhealthy on every
	// member before it counts as quorum lost: a member removal that takes
	// the leader, or a leader's restart, costs one election (etcd's
	// default election timeout is 1 s), not a lost quorum.
	etcdElectionBound = 3 * time.Second
	// maxViolations bounds the violations an invariants run keeps.
	maxViolations = 20
)

// invariants samples, every invariantEvery while a scenario runs, the
// promises kcore makes about the whole cluster, whatever the scenario:
//
//   - never two holders of the VIP (sampled on every lab namespace);
//   - never two control planes' kube-apiservers restarting at once: a
//     kube-apiserver restarts from the sample its unit's process changes
//     or stops until its own /readyz answers (a node whose unit is gone
//     left the cluster; a process that was never seen running started);
//   - etcd never without quorum by kcore's own action: some member
//     answers /health?serializable=true on its client URL (it has a
//     leader, and etcd's leader steps down once it loses quorum), or none
//     has for at most etcdElectionBound. The linearizable /health also
//     fails while a slow fdatasync holds reads past a sample's timeout,
//     which is the host's disk, not a lost quorum.
//
// Windows without any VIP holder are recorded, not judged: a scenario
// bounds them with its /readyz probe.
type invariants struct {
	l      *lab
	nodes  []labNode
	client *http.Client
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu         sync.Mutex
	samples    int
	maxGap     time.Duration
	vipSamples int
	vipMaxGap  time.Duration
	maxHolders int
	noHolder   []time.Duration
	maxDown    int
	etcdLost   []time.Duration
	violations []string
}

// startInvariants samples the invariants on nodes (the lab's control
// planes and any namespace that may become one) until stop.
func (l *lab) startInvariants(t *testing.T, nodes ...labNode) *invariants {
	t.Helper()
	pool := x509.NewCertPool()
	for _, ca := range []string{"ca.crt", "etcd/ca.crt"} {
		pem, err := os.ReadFile(filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki", ca))
		if err != nil {
			t.Fatal(err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			t.Fatalf("no certificate in the lab's %s", ca)
		}
	}
	pki := filepath.Join(l.dir, "n1", "etc", "kubernetes", "pki")
	cert, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-etcd-client.crt"), filepath.Join(pki, "apiserver-etcd-client.key"))
	if err != nil {
		t.Fatalf("load the etcd client certificate: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inv := &invariants{
		l: l, nodes: nodes, cancel: cancel,
		client: &http.Client{Timeout: invariantTimeout, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}, DisableKeepAlives: true,
		}},
	}
	inv.done.Add(2)
	go inv.sampleVIP(ctx)
	go inv.run(ctx)
	t.Cleanup(func() { inv.stop() })
	return inv
}

// sampleVIP samples the VIP's holders until ctx ends, through one netlink
// socket per namespace, so a sample costs no process start.
func (inv *invariants) sampleVIP(ctx context.Context) {
	defer inv.done.Done()
	handles := map[string]*netlink.Handle{}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	tick := time.NewTicker(invariantEvery)
	defer tick.Stop()
	var noHolderSince, last time.Time
	for {
		select {
		case <-ctx.Done():
			inv.mu.Lock()
			if !noHolderSince.IsZero() {
				inv.noHolder = append(inv.noHolder, time.Since(noHolderSince).Round(invariantEvery))
			}
			inv.mu.Unlock()
			return
		case <-tick.C:
		}
		now := time.Now()
		holders := inv.vipHolders(handles)
		inv.mu.Lock()
		inv.vipSamples++
		if !last.IsZero() && now.Sub(last) > inv.vipMaxGap {
			inv.vipMaxGap = now.Sub(last)
		}
		last = now
		inv.maxHolders = max(inv.maxHolders, len(holders))
		if len(holders) > 1 {
			inv.violate("%s: the VIP %s held by %v at once", now.Format(time.TimeOnly), vip, holders)
		}
		switch {
		case len(holders) == 0 && noHolderSince.IsZero():
			noHolderSince = now
		case len(holders) > 0 && !noHolderSince.IsZero():
			inv.noHolder = append(inv.noHolder, now.Sub(noHolderSince).Round(invariantEvery))
			noHolderSince = time.Time{}
		}
		inv.mu.Unlock()
	}
}

// run samples the kube-apiservers and etcd until ctx ends.
func (inv *invariants) run(ctx context.Context) {
	defer inv.done.Done()
	tick := time.NewTicker(invariantEvery)
	defer tick.Stop()
	pids := map[string]int{}
	restarting := map[string]bool{}
	var etcdBadSince, last time.Time
	for {
		select {
		case <-ctx.Done():
			now := time.Now()
			inv.mu.Lock()
			if !etcdBadSince.IsZero() && now.Sub(etcdBadSince) > etcdElectionBound {
				inv.etcdLost = append(inv.etcdLost, now.Sub(etcdBadSince).Round(invariantEvery))
			}
			inv.mu.Unlock()
			return
		case <-tick.C:
		}
		now := time.Now()
		down := inv.apiserversRestarting(pids, restarting)
		etcdOK := inv.etcdHealthy()

		inv.mu.Lock()
		inv.samples++
		if !last.IsZero() && now.Sub(last) > inv.maxGap {
			inv.maxGap = now.Sub(last)
		}
		last = now
		inv.maxDown = max(inv.maxDown, len(down))
		if len(down) > 1 {
			inv.violate("%s: kube-apiservers restarting at once on %v", now.Format(time.TimeOnly), down)
		}
		switch {
		case !etcdOK && etcdBadSince.IsZero():
			etcdBadSince = now
		case etcdOK && !etcdBadSince.IsZero():
			if w := now.Sub(etcdBadSince); w > etcdElectionBound {
				inv.etcdLost = append(inv.etcdLost, w.Round(invariantEvery))
				inv.violate("%s: no etcd member healthy for %s", now.Format(time.TimeOnly), w.Round(invariantEvery))
			}
			etcdBadSince = time.Time{}
		}
		inv.mu.Unlock()
	}
}

// violate records a violation; the caller holds mu.
func (inv *invariants) violate(format string, args ...any) {
	if len(inv.violations) < maxViolations {
		inv.violations = append(inv.violations, fmt.Sprintf(format, args...))
	}
}

// vipHolders are the sampled namespaces whose eth0 holds the VIP, read
// through handles (one netlink socket per namespace, opened on first use);
// a namespace that cannot be read holds nothing.
func (inv *invariants) vipHolders(handles map[string]*netlink.Handle) []string {
	var out []string
	for _, n := range inv.nodes {
		h, ok := handles[n.name]
		if !ok {
			ns, err := netns.GetFromName(labNetns(n.name))
			if err != nil {
				continue
			}
			h, err = netlink.NewHandleAt(ns)
			ns.Close()
			if err != nil {
				continue
			}
			handles[n.name] = h
		}
		link, err := h.LinkByName("eth0")
		if err != nil {
			continue
		}
		addrs, err := h.AddrList(link, netlink.FAMILY_V4)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if a.IP.String() == vip {
				out = append(out, n.name)
				break
			}
		}
	}
	return out
}

// apiserversRestarting updates, from each node's supervisor state, which
// kube-apiservers are restarting and returns them, sorted.
func (inv *invariants) apiserversRestarting(pids map[string]int, restarting map[string]bool) []string {
	for _, n := range inv.nodes {
		s, err := inv.l.units(n.name)
		if err != nil {
			continue
		}
		u, ok := s.Units["kcore-kube-apiserver"]
		if !ok {
			// The unit is gone: the node left the cluster.
			delete(pids, n.name)
			delete(restarting, n.name)
			continue
		}
		seen, known := pids[n.name]
		if u.PID != seen && known {
			restarting[n.name] = true
		}
		pids[n.name] = u.PID
		if restarting[n.name] && u.PID != 0 && inv.ready(n.addr) {
			delete(restarting, n.name)
		}
	}
	var out []string
	for n := range restarting {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ready is whether the kube-apiserver at addr answers /readyz.
func (inv *invariants) ready(addr string) bool {
	resp, err := inv.client.Get("https://" + addr + ":" + apiPort + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// etcdHealthy is whether some etcd member of the sampled nodes answers
// /health?serializable=true as healthy (etcd says so only with a leader).
func (inv *invariants) etcdHealthy() bool {
	for _, n := range inv.nodes {
		resp, err := inv.client.Get("https://" + n.addr + ":2379/health?serializable=true")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`) {
			return true
		}
	}
	return false
}

// stop ends the sampling.
func (inv *invariants) stop() {
	inv.cancel()
	inv.done.Wait()
}

// check stops the sampling, logs what was sampled, and fails t for every
// violation and for a run with too few samples to mean anything.
func (inv *invariants) check(t *testing.T) {
	t.Helper()
	inv.stop()
	inv.mu.Lock()
	defer inv.mu.Unlock()
	t.Logf("invariants: VIP sampled %d times (longest gap %s): at most %d holder(s), windows without one %v; kube-apiservers and etcd sampled %d times (longest gap %s): at most %d kube-apiserver(s) restarting at once; etcd without quorum %v",
		inv.vipSamples, inv.vipMaxGap.Round(time.Millisecond), inv.maxHolders, inv.noHolder,
		inv.samples, inv.maxGap.Round(time.Millisecond), inv.maxDown, inv.etcdLost)
	for _, v := range inv.violations {
		t.Errorf("invariant violated: %s", v)
	}
	if inv.samples < 10 || inv.vipSamples < 10 {
		t.Errorf("invariants: only %d VIP samples and %d of the rest", inv.vipSamples, inv.samples)
	}
}
