package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/runtime"
)

// fakeController serves NodeStates with blocking-query semantics and records calls.
type fakeController struct {
	mu         sync.Mutex
	changed    chan struct{}
	index      uint64
	states     []api.NodeState
	failFetch  int
	heartbeats int
	facts      []api.NodeFacts
	reports    []api.NodeReport
	events     []string // "facts" and "report G" in the order they arrived
}

func newFakeController() *fakeController {
	return &fakeController{changed: make(chan struct{}), index: 1}
}

func (f *fakeController) set(states ...api.NodeState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.states = states
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeController) NodeState(ctx context.Context, _ string, index uint64, wait time.Duration) ([]api.NodeState, uint64, error) {
	f.mu.Lock()
	if f.failFetch > 0 {
		f.failFetch--
		f.mu.Unlock()
		return nil, 0, errors.New("no leader")
	}
	ch, idx := f.changed, f.index
	f.mu.Unlock()
	if index == idx {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.NodeState{}, f.states...), f.index, nil
}

func (f *fakeController) PutFacts(_ context.Context, _ string, facts api.NodeFacts) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.facts = append(f.facts, facts)
	f.events = append(f.events, "facts")
	return 1, nil
}

func (f *fakeController) Heartbeat(context.Context, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heartbeats++
	return nil
}

func (f *fakeController) PutReport(_ context.Context, _ string, r api.NodeReport) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reports = append(f.reports, r)
	f.events = append(f.events, fmt.Sprintf("report %d", r.ObservedGeneration))
	return 1, nil
}

func (f *fakeController) lastReport() (api.NodeReport, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reports) == 0 {
		return api.NodeReport{}, false
	}
	return f.reports[len(f.reports)-1], true
}

func TestAgentRunJoinsAppliesAndReports(t *testing.T) {
	root := t.TempDir()
	ctl := newFakeController()
	ctl.failFetch = 1
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	joins := 0
	var connected Credentials
	a := &Agent{
		NodeID:  "node-105",
		Root:    root,
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Facts: &Collector{Root: root, Runner: execrun.NewRecorder(), FsyncSamples: 5,
			Interfaces: func() ([]api.Interface, error) { return nil, nil }},
		Join: func(context.Context) (Credentials, error) {
			joins++
			return Credentials{Cert: []byte("CERT"), Key: []byte("KEY"), CA: []byte("CA")}, nil
		},
		Connect: func(_ context.Context, c Credentials, _ *CertSource) (Controller, error) {
			connected = c
			return ctl, nil
		},
		HeartbeatInterval: 10 * time.Millisecond,
		FactsInterval:     10 * time.Millisecond,
		RetryInterval:     20 * time.Millisecond,
		BackoffMax:        20 * time.Millisecond,
	}
	ns := labState(1, "KEY", "kubelet", "e1", "a1")
	ctl.set(ns)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	waitFor(t, "a settled report of generation 1", func() bool {
		r, ok := ctl.lastReport()
		return ok && r.ObservedGeneration == 1 && !Pending([]api.NodeReport{r})
	})
	ctl.set(labState(2, "KEY", "kubelet v2", "e1", "a2"))
	waitFor(t, "a settled report of generation 2", func() bool {
		r, ok := ctl.lastReport()
		return ok && r.ObservedGeneration == 2 && !Pending([]api.NodeReport{r})
	})
	if data, _ := os.ReadFile(filepath.Join(root, "etc/kubernetes/kubelet.conf")); string(data) != "kubelet v2" {
		t.Fatalf("kubelet.conf = %q", data)
	}
	waitFor(t, "heartbeats", func() bool { ctl.mu.Lock(); defer ctl.mu.Unlock(); return ctl.heartbeats >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}

	if joins != 1 || string(connected.Cert) != "CERT" {
		t.Fatalf("joins %d, connected with %q", joins, connected.Cert)
	}
	st, err := os.Stat(filepath.Join(root, CredentialsDir, "node.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("node key: %v %v", st, err)
	}
	ctl.mu.Lock()
	nFacts := len(ctl.facts)
	fs := ctl.facts[0].Fsync
	ctl.mu.Unlock()
	if nFacts != 1 || fs == nil {
		t.Fatalf("facts sent %d times (unchanged facts must not be resent), fsync %v", nFacts, fs)
	}

	// A restarted agent uses the stored credentials: no second join.
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { done <- a.Run(ctx2) }()
	waitFor(t, "heartbeats after restart", func() bool { ctl.mu.Lock(); defer ctl.mu.Unlock(); return ctl.heartbeats >= 6 })
	cancel2()
	<-done
	if joins != 1 {
		t.Fatalf("joined %d times", joins)
	}
}

// A unit stopped for good can free an address the facts show (keepalived's
// VIP): the agent measures the facts again and sends them before the report
// of the generation that removed it, long before its facts interval.
func TestAgentSendsFactsBeforeReportingRemovedUnits(t *testing.T) {
	root, ctl, sup := testNode(t)
	var mu sync.Mutex
	vip := true
	a := &Agent{
		NodeID:  "node-105",
		Root:    root,
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder()},
		Facts: &Collector{Root: root, Runner: execrun.NewRecorder(), FsyncSamples: 5,
			Interfaces: func() ([]api.Interface, error) {
				mu.Lock()
				defer mu.Unlock()
				addrs := []string{"10.77.0.12/24"}
				if vip {
					addrs = append(addrs, "10.77.0.100/24")
				}
				return []api.Interface{{Name: "eth0", Addresses: addrs}}, nil
			}},
		Connect:       func(context.Context, Credentials, *CertSource) (Controller, error) { return ctl, nil },
		FactsInterval: time.Hour,
		RetryInterval: 20 * time.Millisecond,
		BackoffMax:    20 * time.Millisecond,
	}
	if err := StoreCredentials(root, Credentials{Cert: []byte("CERT"), Key: []byte("KEY"), CA: []byte("CA")}); err != nil {
		t.Fatal(err)
	}
	ctl.set(labState(1, "KEY", "kubelet", "e1", "a1"))
	runAgent(t, a)
	waitFor(t, "a settled report of generation 1", func() bool {
		r, ok := ctl.lastReport()
		return ok && r.ObservedGeneration == 1 && !Pending([]api.NodeReport{r})
	})

	// Generation 2 tears the cluster's units down; keepalived's exit frees the VIP.
	mu.Lock()
	vip = false
	mu.Unlock()
	ctl.set(api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 2})
	waitFor(t, "a report of generation 2", func() bool {
		r, ok := ctl.lastReport()
		return ok && r.ObservedGeneration == 2
	})
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	first := slices.Index(ctl.events, "report 2")
	last := -1
	for i, f := range ctl.facts {
		if !slices.Contains(f.Addresses, "10.77.0.100") {
			last = i
			break
		}
	}
	if last < 0 {
		t.Fatalf("no facts without the VIP were sent (events %v)", ctl.events)
	}
	if factsAt := indexOfNth(ctl.events, "facts", last); factsAt > first {
		t.Fatalf("the facts without the VIP came after the report of generation 2: %v", ctl.events)
	}
}

// indexOfNth is the index in events of the n-th (from 0) occurrence of e, or -1.
func indexOfNth(events []string, e string, n int) int {
	for i, x := range events {
		if x == e {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// TestAgentReappliesWhenPendingUnitTurnsReady: a unit reported pending
// (its health probe failing) is reported ok as soon as it turns healthy,
// not after the retry interval, which here is an hour.
func TestAgentReappliesWhenPendingUnitTurnsReady(t *testing.T) {
	root, ctl, sup := testNode(t)
	var healthy atomic.Bool
	a := &Agent{
		NodeID: "node-105",
		Root:   root,
		Applier: &Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder(), UnitSettle: 50 * time.Millisecond,
			Health: func(context.Context, string) error {
				if !healthy.Load() {
					return errors.New("not yet")
				}
				return nil
			}},
		Join: func(context.Context) (Credentials, error) {
			return Credentials{Cert: []byte("CERT"), Key: []byte("KEY"), CA: []byte("CA")}, nil
		},
		Connect:         func(context.Context, Credentials, *CertSource) (Controller, error) { return ctl, nil },
		RetryInterval:   time.Hour,
		PendingInterval: 10 * time.Millisecond,
		BackoffMax:      20 * time.Millisecond,
	}
	u := helperUnit("kcore-kube-apiserver", "serve", "a1")
	u.HealthURL = "https://127.0.0.1:6443/readyz"
	ctl.set(api.NodeState{Cluster: "lab", NodeID: "node-105", Generation: 1, Units: []api.Unit{u}})
	runAgent(t, a)

	waitFor(t, "a report with the unit pending", func() bool {
		r, ok := ctl.lastReport()
		return ok && Pending([]api.NodeReport{r})
	})
	healthy.Store(true)
	waitFor(t, "a report with the unit ok", func() bool {
		r, ok := ctl.lastReport()
		return ok && !Pending([]api.NodeReport{r})
	})
}

// runAgent runs a until the test ends.
func runAgent(t *testing.T, a *Agent) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// testNode is a node root with a supervisor, whose units stop when the test
// ends, and a fake controller.
func testNode(t *testing.T) (string, *fakeController, *runtime.Supervisor) {
	root := t.TempDir()
	sup := newSupervisor(t, root)
	stopAll(t, sup)
	return root, newFakeController(), sup
}
