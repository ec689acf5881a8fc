package keepalived

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/agent"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/runtime"
)

// Bounds of the peer-change test.
const (
	// sampleEvery is how often the VIP's holders are counted (10 Hz, as the
	// lab's API probe).
	sampleEvery = 100 * time.Millisecond
	// watchAfterChange is how long the holders are counted once both
	// staying control planes got their new peers: longer than keepalived's
	// master-down interval (3 adverts of 1 s and the skew), the gap a
	// restart of both leaves.
	watchAfterChange = 8 * time.Second
	// applyTimeout bounds one agent apply.
	applyTimeout = 30 * time.Second
	// maxSampleGap is the longest time allowed between two samples (a
	// loaded machine runs ip slowly): well under the seconds a restart
	// leaves the VIP unheld, so no such gap can fall between samples.
	maxSampleGap = time.Second
)

// node is one control plane of the test: an agent (the real applier and
// supervisor) whose keepalived runs in namespace ns.
type node struct {
	id      string
	ns      string
	applier *agent.Applier
}

// newNode gives namespace ns an agent with its own root; the rendered
// state is reduced to keepalived (its unit and configuration), rebased under
// the root, and its argv run inside ns. The supervisor stops keepalived on
// cleanup.
func newNode(t *testing.T, id, ns, keepalived string) *node {
	t.Helper()
	root := t.TempDir()
	sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
		defer cancel()
		_ = sup.Stop(ctx, render.UnitKeepalived)
		if t.Failed() {
			raw, _ := os.ReadFile(sup.LogPath(render.UnitKeepalived))
			t.Logf("keepalived log of %s:\n%s", id, raw)
		}
	})
	rebase := func(full *api.NodeState) *api.NodeState {
		ns0 := *full
		ns0.Files, ns0.Units, ns0.Tasks, ns0.Volumes = nil, nil, nil, nil
		for _, f := range full.Files {
			if f.Path == render.KeepalivedConfigPath {
				ns0.Files = append(ns0.Files, f)
			}
		}
		for _, u := range full.Units {
			if u.Name == render.UnitKeepalived {
				ns0.Units = append(ns0.Units, u)
			}
		}
		out := render.Rebase(&ns0, root)
		for i := range out.Units {
			u := &out.Units[i]
			u.Argv = append([]string{"ip", "netns", "exec", ns, keepalived}, u.Argv[1:]...)
		}
		return out
	}
	return &node{id: id, ns: ns, applier: &agent.Applier{Root: root, Runtime: sup, Runner: execrun.NewRecorder(), Rebase: rebase}}
}

// apply gives the node its state of c (as the controller publishes it)
// until the agent reports keepalived ok.
func (n *node) apply(t *testing.T, states map[string]*api.NodeState, gen int64) error {
	ns := *states[n.id]
	ns.Generation = gen
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		reps, err := n.applier.Apply(ctx, []api.NodeState{ns})
		if err != nil {
			return fmt.Errorf("apply on %s: %w", n.id, err)
		}
		if !agent.Pending(reps) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("apply on %s: still pending: %+v", n.id, reps[0].Items)
		case <-tick.C:
		}
	}
}

// renderPeers renders the cluster whose control planes are ids, at the
// addresses of the lab's namespaces (cp-N in the N-th one).
func renderPeers(t *testing.T, l *lab, vip string, ids ...int) map[string]*api.NodeState {
	t.Helper()
	c := &api.KubernetesCluster{
		Metadata: api.ObjectMeta{Name: "vip"},
		Spec: api.ClusterSpec{
			ClusterCIDR:       "10.244.0.0/16",
			ServiceCIDR:       "10.96.0.0/12",
			APIServerEndpoint: vip + ":6443",
			HighAvailability:  api.HASpec{Enabled: true, VIPAddress: vip, VIPInterface: "eth0"},
		},
	}
	for _, i := range ids {
		c.Spec.ControlPlaneNodes = append(c.Spec.ControlPlaneNodes,
			api.ClusterNode{NodeID: fmt.Sprintf("cp-%d", i), AdvertiseAddress: l.addrs[i-1], Iface: "eth0"})
	}
	c.Spec.ScheduleOnControlPlane = true
	c.Default()
	if errs := c.Validate().Errors(); len(errs) > 0 {
		t.Fatalf("test cluster invalid: %v", errs)
	}
	secrets, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	states, err := render.Render(c, secrets, nil, render.Options{HealthCheckCommand: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	return states
}

// sampler counts the VIP's holders every sampleEvery until stopped.
type sampler struct {
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	counts []int
	holder []int
	at     []time.Time
}

// widestGap is the longest time between two samples.
func (s *sampler) widestGap() time.Duration {
	var w time.Duration
	for i := 1; i < len(s.at); i++ {
		w = max(w, s.at[i].Sub(s.at[i-1]))
	}
	return w
}

func (l *lab) sample(t *testing.T, vip string) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			h := l.holdersNow(vip)
			s.mu.Lock()
			s.counts = append(s.counts, len(h))
			s.at = append(s.at, time.Now())
			if len(h) == 1 {
				s.holder = append(s.holder, h[0])
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.end)
	return s
}

// end stops sampling (once) and waits for the sampler.
func (s *sampler) end() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// TestPeerChangeReloadKeepsVIP replaces a dead control plane's VRRP peer
// the way `kctl kubernetes replace` does: cp-1 and cp-2 run (cp-3 is dead),
// then both get, at once through their agents, the configuration with cp-3
// out and cp-4 in, and cp-4 starts. The agents reload keepalived (SIGHUP)
// rather than restarting it, so at every 100 ms sample exactly one node
// holds the VIP: never none (a restart of both leaves it unheld for
// seconds), never two (cp-4, the highest priority, would take it if the
// holder's reloaded configuration did not advertise to it), and the holder
// never changes.
func TestPeerChangeReloadKeepsVIP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: keepalived reload test needs root (network namespaces, a bridge); run it as root")
	}
	keepalived, err := exec.LookPath("keepalived")
	if err != nil {
		t.Skip("SKIP: keepalived is not installed (apt-get install -y keepalived); the reload test did not run")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("SKIP: iproute2 (ip) is not installed")
	}
	pid := os.Getpid()
	prefix := fmt.Sprintf("kr%d", pid%1000000)
	subnet := (pid+125)%250 + 1
	l := newLab(t, prefix, subnet, 4)
	vip := fmt.Sprintf("10.240.%d.200", subnet)

	before := renderPeers(t, l, vip, 1, 2, 3)
	after := renderPeers(t, l, vip, 1, 2, 4)
	nodes := make([]*node, 4)
	for i := range nodes {
		nodes[i] = newNode(t, fmt.Sprintf("cp-%d", i+1), l.ns[i], keepalived)
	}
	for _, n := range nodes[:2] {
		if err := n.apply(t, before, 1); err != nil {
			t.Fatal(err)
		}
	}
	first := l.waitHolder(t, vip, func(i int) bool { return i < 2 })
	t.Logf("VIP on %s with peers cp-1, cp-2, cp-3 (cp-3 dead)", nodes[first].id)

	s := l.sample(t, vip)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, n := range nodes[:2] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = n.apply(t, after, 2)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[3].apply(t, after, 1); err != nil {
		t.Fatal(err)
	}
	deadline := time.NewTimer(watchAfterChange)
	defer deadline.Stop()
	<-deadline.C
	s.end()

	s.mu.Lock()
	defer s.mu.Unlock()
	none, many := 0, 0
	for _, c := range s.counts {
		switch {
		case c == 0:
			none++
		case c > 1:
			many++
		}
	}
	t.Logf("%d samples, at most %s apart: %d with no holder, %d with more than one", len(s.counts), s.widestGap().Round(time.Millisecond), none, many)
	if w := s.widestGap(); w > maxSampleGap {
		t.Fatalf("two samples were %s apart (> %s): the VIP was not watched closely enough", w, maxSampleGap)
	}
	if none > 0 || many > 0 {
		t.Fatalf("the VIP was held by nobody in %d and by several nodes in %d of %d samples (every %s) while the peers changed: %v",
			none, many, len(s.counts), sampleEvery, s.counts)
	}
	for _, h := range s.holder {
		if h != first {
			t.Fatalf("the VIP moved from %s to %s while the peers changed", nodes[first].id, nodes[h].id)
		}
	}
}
