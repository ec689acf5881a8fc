package cli

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/store"
)

// waitFor polls until the cluster is stored with phase.
func (a *applyEnv) waitFor(name, phase string) {
	a.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if kc, ok := a.cluster(name); ok && kc.Status.Phase == phase {
			return
		}
		<-tick.C
	}
	a.t.Fatalf("cluster %s never reached phase %s", name, phase)
}

type result struct {
	out string
	err error
}

// syncBuffer is an output buffer the test reads while kctl writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// applyAsync runs kctl in the background; its output can be read meanwhile.
func (a *applyEnv) applyAsync(args ...string) (<-chan result, *syncBuffer) {
	done := make(chan result, 1)
	out := &syncBuffer{}
	go func() {
		root := NewKctl(Streams{In: strings.NewReader(""), Out: out, Err: io.Discard})
		root.SetArgs(args)
		err := root.Execute()
		done <- result{out.String(), err}
	}()
	return done, out
}

// waitOutput polls until out contains want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	waitOutputMatch(t, out, regexp.MustCompile(regexp.QuoteMeta(want)))
}

// waitOutputMatch waits until the output matches want.
func waitOutputMatch(t *testing.T, out *syncBuffer, want *regexp.Regexp) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !want.MatchString(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%s", want, out.String())
		}
		<-tick.C
	}
}

func TestWaitFollowsPhases(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	done, out := a.applyAsync("kubernetes", "apply", "-f", lab, "--yes", "--wait")
	a.waitFor("lab", api.PhaseBootstrapping)
	// Stand in for the orchestrator: nodes come up one by one, then ready.
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseBootstrapping, Nodes: []api.NodeStatus{
		{NodeID: "node-105", Role: api.RoleControlPlane, Ready: true},
		{NodeID: "node-107", Role: api.RoleControlPlane, Ready: false, Message: "etcd joining"},
	}})
	waitOutput(t, out, "etcd joining")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, Nodes: []api.NodeStatus{
		{NodeID: "node-105", Role: api.RoleControlPlane, Ready: true},
		{NodeID: "node-107", Role: api.RoleControlPlane, Ready: true},
		{NodeID: "node-103", Role: api.RoleWorker, Ready: true},
	}})
	r := <-done
	if r.err != nil {
		t.Fatalf("apply --wait: %v\n%s", r.err, r.out)
	}
	for _, want := range []string{
		`cluster "lab": phase bootstrapping`,
		"node-107 (control-plane): not ready: etcd joining",
		"node-107 (control-plane): ready",
		"node-103 (worker): ready",
		`cluster "lab": phase bootstrapping → ready`,
		`cluster "lab" is ready`,
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
}

func TestWaitEndsDegradedOrTimesOut(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	done, _ := a.applyAsync("kubernetes", "apply", "-f", lab, "--yes", "--wait")
	a.waitFor("lab", api.PhaseBootstrapping)
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseDegraded, Conditions: []api.Condition{
		{Type: "APIServerHealthy", Status: "False", Reason: "Unreachable", Message: "node-107:6443 refused"},
		{Type: "EtcdQuorum", Status: "True"},
	}})
	r := <-done
	if !errors.Is(r.err, ErrDegraded) || ExitCode(r.err) != 1 {
		t.Fatalf("apply --wait on a degraded cluster = %v", r.err)
	}
	if !strings.Contains(r.out, "failing: APIServerHealthy: Unreachable node-107:6443 refused") || strings.Contains(r.out, "failing: EtcdQuorum") {
		t.Fatalf("failing conditions:\n%s", r.out)
	}

	// Nothing moves the edge cluster: --wait gives up at its timeout.
	edge := a.write("edge.yaml", edgeManifest)
	out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "apply", "-f", edge, "--yes", "--wait", "--timeout", "300ms")
	if ExitCode(err) != 1 || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("timeout = %v\n%s", err, out)
	}
}

func TestDeleteWaitsUntilGone(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("edge.yaml", edgeManifest), "--yes")
	a.setStatus("edge", api.ClusterStatus{Phase: api.PhaseReady})

	// n cancels.
	if out, _, err := a.runIn(answer("n\n"), "kubernetes", "delete", "edge"); ExitCode(err) != 1 || !strings.Contains(out, "Apply cancelled.") {
		t.Fatalf("delete answered n = %v\n%s", err, out)
	}
	done, _ := a.applyAsync("kubernetes", "delete", "edge", "--yes", "--wait", "--purge-volumes")
	a.waitFor("edge", api.PhaseDeleting)
	kc, _ := a.cluster("edge")
	if len(kc.Status.Conditions) != 1 || kc.Status.Conditions[0].Type != "PurgeVolumes" {
		t.Fatalf("delete options not recorded: %+v", kc.Status.Conditions)
	}
	// Stand in for the orchestrator: the object goes last.
	commitThroughRaft(t, a.ctl, store.Delete{Kind: api.KindKubernetesCluster, Name: "edge"})
	r := <-done
	if r.err != nil || !strings.Contains(r.out, "THEIR DATA IS LOST") || !strings.Contains(r.out, `cluster "edge": deleted`) {
		t.Fatalf("delete --wait = %v\n%s", r.err, r.out)
	}
}

// staleReadyGrace is how long TestWaitIgnoresStaleReady gives --wait to
// (wrongly) end after it printed a stale ready phase.
const staleReadyGrace = time.Second

// --wait does not end on a ready phase no health pass has refreshed for
// longer than the staleness bound (the controllers' last word before they
// went down), only on a current one.
func TestWaitIgnoresStaleReady(t *testing.T) {
	a := newApplyEnv(t)
	lab := a.write("lab.yaml", labManifest(t))
	done, out := a.applyAsync("kubernetes", "apply", "-f", lab, "--yes", "--wait")
	a.waitFor("lab", api.PhaseBootstrapping)
	old := time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339)
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, LastHealthCheck: old, HealthInterval: "10s"})
	// The follow may first read the cluster after the stale status was
	// written, and then prints the phase without the one before it.
	waitOutputMatch(t, out, regexp.MustCompile(`cluster "lab": phase (bootstrapping → )?ready\n`))
	// The old follow returned at once after printing the phase: give it
	// staleReadyGrace to do so.
	select {
	case r := <-done:
		t.Fatalf("apply --wait ended on a stale ready status: err %v\n%s", r.err, r.out)
	case <-time.After(staleReadyGrace):
	}
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, LastHealthCheck: time.Now().UTC().Format(time.RFC3339), HealthInterval: "10s"})
	if r := <-done; r.err != nil || !strings.Contains(r.out, `cluster "lab" is ready`) {
		t.Fatalf("apply --wait after a current ready status: err %v\n%s", r.err, r.out)
	}
}
