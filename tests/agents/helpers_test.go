package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/agent"
	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/controller"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/orchestrator"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/runtime"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

const waitFor = 60 * time.Second

// poll calls cond until it returns nil or waitFor passes.
func poll(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s: %v", waitFor, err)
		}
		<-tick.C
	}
}

// testLogger logs through t.Log until the test ends.
func testLogger(t *testing.T, level slog.Level) *slog.Logger {
	var closed atomic.Bool
	t.Cleanup(func() { closed.Store(true) })
	return slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		if !closed.Load() {
			t.Log(strings.TrimSpace(string(p)))
		}
		return len(p), nil
	}), &slog.HandlerOptions{Level: level}))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// okChecker reports every cluster healthy: the workloads are stand-ins with
// no etcd or API to check (pkg/orchestrator tests the real HTTPS checker).
type okChecker struct{}

func (okChecker) Check(context.Context, *api.KubernetesCluster, *pki.ClusterSecrets) orchestrator.Health {
	ok := orchestrator.CheckResult{OK: true, Message: "stand-in"}
	return orchestrator.Health{API: ok, Etcd: ok}
}

// EtcdCaughtUp says every member is caught up: there is no etcd here.
func (okChecker) EtcdCaughtUp(context.Context, *api.KubernetesCluster, *pki.ClusterSecrets, string) string {
	return ""
}

// readyKube is a Kubernetes API where every member registered and is
// Ready: the stand-in kubelets register nothing, so it answers for them
// (pkg/orchestrator tests the real client). Patches, evictions and deletes
// succeed and change nothing; every add-on Deployment is available.
type readyKube struct{}

func dialReadyKube(*api.KubernetesCluster, *pki.ClusterSecrets) (orchestrator.KubeClient, error) {
	return readyKube{}, nil
}

func (readyKube) GetNode(_ context.Context, name string) (*orchestrator.KubeNode, error) {
	return &orchestrator.KubeNode{Name: name, Ready: true}, nil
}

func (readyKube) PatchNode(context.Context, string, orchestrator.NodePatch) error { return nil }

func (readyKube) NodePods(context.Context, string) ([]orchestrator.KubePod, error) { return nil, nil }

func (readyKube) Evict(context.Context, string, string) error { return nil }

func (readyKube) DeleteNode(context.Context, string) error { return nil }

// GetDeployment answers every add-on Deployment available with its one
// replica: the stand-in clusters run no pods.
func (readyKube) GetDeployment(context.Context, string, string) (*orchestrator.KubeDeployment, error) {
	return &orchestrator.KubeDeployment{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}, nil
}

// GetDaemonSet answers every DaemonSet ready on its one node.
func (readyKube) GetDaemonSet(context.Context, string, string) (*orchestrator.KubeDeployment, error) {
	return &orchestrator.KubeDeployment{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}, nil
}

func (readyKube) LabeledPods(context.Context, string, map[string]string, int) ([]orchestrator.KubePodStatus, error) {
	return nil, nil
}

func (readyKube) PodEvents(context.Context, string, string, int) ([]orchestrator.KubeEvent, error) {
	return nil, nil
}

func (readyKube) Close() {}

// lab is one test's controller and its CA.
type lab struct {
	t    *testing.T
	ca   *pki.CA
	ctl  *controller.Controller
	bin  string
	log  *slog.Logger
	mu   sync.Mutex
	node map[string]*nodeAgent
}

// startController starts a bootstrapped single-replica controller on
// 127.0.0.1:0 with the orchestrator running.
func startController(t *testing.T) *lab {
	t.Helper()
	ca, err := pki.NewCA("kcore", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	key, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kp, err := ca.Issue(pki.CertRequest{
		CommonName: "controller", Organization: []string{apiv1.RoleController},
		DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		Usage: pki.UsageServer | pki.UsageClient, Validity: time.Hour,
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		controller.FileCACert: ca.CertPEM, controller.FileCAKey: ca.KeyPEM,
		controller.FileServerCert: kp.CertPEM, controller.FileServerKey: kp.KeyPEM,
		controller.FileEncryptionKey: key,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := &lab{t: t, ca: ca, log: testLogger(t, slog.LevelWarn), node: map[string]*nodeAgent{}}
	l.ctl, err = controller.Start(context.Background(), controller.Config{
		DataDir: t.TempDir(), Listen: "127.0.0.1:0", PKIDir: dir, Bootstrap: true, FastTimeouts: true,
		HealthInterval: 200 * time.Millisecond, HealthChecker: okChecker{}, KubeDialer: dialReadyKube,
		RenderOptions: render.Options{Profile: render.ProfileLab},
		Logger:        l.log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.ctl.Close() })
	poll(t, func() error {
		if !l.ctl.Node().IsLeader() {
			return fmt.Errorf("not leader yet")
		}
		return nil
	})
	return l
}

// put commits a put through the controller's raft node directly, standing
// in for plan and apply and for the orchestrator (the HTTP API writes
// clusters only through plan and apply).
func (l *lab) put(kind, name string, v any) {
	l.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		l.t.Fatal(err)
	}
	cmd, err := store.Put{Kind: kind, Name: name, Data: data}.Command()
	if err != nil {
		l.t.Fatal(err)
	}
	if _, err := l.ctl.Node().Apply(context.Background(), cmd); err != nil {
		l.t.Fatal(err)
	}
}

// putCluster stores c with phase, as the apply route does.
func (l *lab) putCluster(c *api.KubernetesCluster, phase string) {
	l.t.Helper()
	if cur, ok := l.cluster(c.Metadata.Name); ok {
		c.Status = cur.Status
		c.Metadata.Generation = cur.Metadata.Generation + 1
	}
	c.Status.Phase = phase
	l.put(api.KindKubernetesCluster, c.Metadata.Name, c)
}

func (l *lab) cluster(name string) (*api.KubernetesCluster, bool) {
	obj, ok := l.ctl.Node().State().Get(api.KindKubernetesCluster, name)
	if !ok {
		return nil, false
	}
	var c api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &c); err != nil {
		l.t.Fatal(err)
	}
	return &c, true
}

// waitPhase waits for the cluster's phase.
func (l *lab) waitPhase(name, phase string) *api.KubernetesCluster {
	l.t.Helper()
	var c *api.KubernetesCluster
	poll(l.t, func() error {
		var ok bool
		if c, ok = l.cluster(name); !ok {
			return fmt.Errorf("cluster %s is not stored", name)
		}
		if c.Status.Phase != phase {
			return fmt.Errorf("phase %q, want %q: %+v", c.Status.Phase, phase, c.Status.Conditions)
		}
		return nil
	})
	return c
}

// waitRolledOut waits until the cluster is ready at its current spec
// generation with no spec rollout of it still running: a change that
// restarts control-plane units or kubelets reaches the nodes step by step,
// and the phase is ready between the steps.
func (l *lab) waitRolledOut(name string) {
	l.t.Helper()
	poll(l.t, func() error {
		c, ok := l.cluster(name)
		if !ok {
			return fmt.Errorf("cluster %s is not stored", name)
		}
		st, gen := c.Status, c.Metadata.Generation
		if st.Phase != api.PhaseReady || st.ObservedGeneration != gen {
			return fmt.Errorf("phase %q at generation %d, want ready at %d: %+v", st.Phase, st.ObservedGeneration, gen, st.Conditions)
		}
		if ro := st.SpecRollout; ro != nil && ro.Generation == gen && ro.Phase != api.SpecRolloutDone {
			return fmt.Errorf("spec rollout of generation %d is %s: %+v", gen, ro.Phase, ro.Steps)
		}
		return nil
	})
}

// states returns the stored NodeStates of a cluster by node, secret
// contents still sealed.
func (l *lab) states(cluster string) map[string]api.NodeState {
	out := map[string]api.NodeState{}
	for _, o := range l.ctl.Node().State().ListPrefix(api.KindNodeState, cluster+"/") {
		var ns api.NodeState
		if err := json.Unmarshal(o.Data, &ns); err != nil {
			l.t.Fatal(err)
		}
		out[ns.NodeID] = ns
	}
	return out
}

// buildStandIns builds the stand-in workload into a bin dir under every
// binary name the states' units and tasks start: long-running units get a
// program that sleeps until SIGTERM, oneshots and tasks one that exits 0.
func (l *lab) buildStandIns(states map[string]api.NodeState) {
	l.t.Helper()
	src := l.t.TempDir()
	prog := `package main

import (
	"os"
	"os/signal"
	"syscall"
)

// mode is set at build time: "serve" sleeps until signalled, anything else
// exits 0 at once.
var mode string

// A stand-in for a Kubernetes workload binary.
func main() {
	if mode != "serve" {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(prog), 0o644); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module standin\n\ngo 1.22\n"), 0o644); err != nil {
		l.t.Fatal(err)
	}
	build := func(mode string) string {
		out := filepath.Join(src, "standin-"+mode)
		cmd := exec.Command("go", "build", "-ldflags=-X main.mode="+mode, "-o", out, ".")
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			l.t.Fatalf("build stand-in: %v\n%s", err, b)
		}
		return out
	}
	serveBin, exitBin := build("serve"), build("exit")
	l.bin = l.t.TempDir()
	serve := map[string]bool{}
	names := map[string]bool{}
	for _, ns := range states {
		for _, u := range ns.Units {
			names[u.Argv[0]] = true
			if !u.Oneshot {
				serve[u.Argv[0]] = true
			}
		}
		for _, tk := range ns.Tasks {
			names[tk.Argv[0]] = true
		}
	}
	for name := range names {
		target := exitBin
		if serve[name] {
			target = serveBin
		}
		if err := os.Symlink(target, filepath.Join(l.bin, filepath.Base(name))); err != nil {
			l.t.Fatal(err)
		}
	}
}

// nodeAgent is one running agent.
type nodeAgent struct {
	id     string
	root   string
	sup    *runtime.Supervisor
	cancel context.CancelFunc
	done   chan struct{}
}

// startAgent runs a real agent for node id under root, with the supervisor
// runtime and the stand-in bin dir, talking to the controller through
// pkg/client with a node certificate.
func (l *lab) startAgent(id, root string) *nodeAgent {
	l.t.Helper()
	kp, err := l.ca.Issue(pki.CertRequest{CommonName: id, Organization: []string{apiv1.RoleNode}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		l.t.Fatal(err)
	}
	if err := agent.StoreCredentials(root, agent.Credentials{Cert: kp.CertPEM, Key: kp.KeyPEM, CA: l.ca.CertPEM}); err != nil {
		l.t.Fatal(err)
	}
	sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{
		Root: root, BinDir: l.bin, Log: l.log.With("node", id, "component", "supervisor"),
		BackoffInitial: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		StopGrace: 2 * time.Second,
	})
	if err != nil {
		l.t.Fatal(err)
	}
	a := &agent.Agent{
		NodeID: id, Root: root,
		Applier: &agent.Applier{
			Root: root, Runtime: sup, Runner: execrun.Exec{Path: []string{l.bin}}, BinDir: l.bin,
			Log:        l.log.With("node", id, "component", "apply"),
			UnitSettle: 2 * time.Second,
			// The stand-ins serve no health endpoint: a running process is healthy.
			Health: func(context.Context, string) error { return nil },
			Rebase: func(ns *api.NodeState) *api.NodeState { return render.Rebase(ns, root) },
		},
		Connect: func(_ context.Context, c agent.Credentials, _ *agent.CertSource) (agent.Controller, error) {
			return client.New(client.Config{Addresses: []string{l.ctl.HTTPAddr()}, CA: c.CA, Cert: c.Cert, Key: c.Key})
		},
		Log:               l.log.With("node", id, "component", "agent"),
		HeartbeatInterval: 100 * time.Millisecond,
		PollWait:          5 * time.Second,
		RetryInterval:     100 * time.Millisecond,
		BackoffMax:        200 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	na := &nodeAgent{id: id, root: root, sup: sup, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(na.done)
		if err := a.Run(ctx); err != nil {
			l.log.Error("agent stopped", "node", id, "err", err)
		}
	}()
	l.mu.Lock()
	l.node[id] = na
	l.mu.Unlock()
	return na
}

// stop ends the agent and detaches its supervisor: the processes keep
// running, as when the agent binary exits.
func (na *nodeAgent) stop() {
	na.cancel()
	<-na.done
	na.sup.Close()
}

// stopUnits stops every unit the agent's root supervises (test cleanup).
func stopUnits(t *testing.T, root, bin string) {
	sup, err := runtime.NewSupervisor(runtime.SupervisorConfig{Root: root, BinDir: bin, StopGrace: time.Second})
	if err != nil {
		t.Log(err)
		return
	}
	ctx := context.Background()
	names, _ := sup.List(ctx)
	for _, n := range names {
		sup.Stop(ctx, n)
	}
	sup.Close()
}

// pids returns the PID of every unit the agent runs.
func (na *nodeAgent) pids(t *testing.T) map[string]int {
	t.Helper()
	ctx := context.Background()
	names, err := na.sup.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, n := range names {
		st, err := na.sup.Status(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if st.PID != 0 {
			out[n] = st.PID
		}
	}
	return out
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
