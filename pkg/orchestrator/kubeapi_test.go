package orchestrator

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/pki"
)

// kubeFixture is a fakeKube served over TLS on the VIP with certificates
// issued by pki.IssueClusterSecrets, and an orchestrator that dials it.
type kubeFixture struct {
	kube *fakeKube
	o    *Orchestrator
	conn *kubeConn
	c    *api.KubernetesCluster
}

func newKubeFixture(t *testing.T) *kubeFixture {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(testVIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	c := labCluster(t, "lab", ln.Addr().(*net.TCPAddr).Port)
	s, err := pki.IssueClusterSecrets(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := &kubeFixture{kube: newFakeKube(), c: c}
	serve(t, ln, staticCreds(s.ControlPlanes[c.Spec.ControlPlaneNodes[0].NodeID].APIServer, s.CA.CertPEM), f.kube.ServeHTTP)
	f.o = &Orchestrator{cfg: Config{DrainTimeout: time.Minute, Kube: DialKube}, log: slog.New(slog.DiscardHandler)}
	f.conn = &kubeConn{dial: DialKube, c: c, s: s}
	t.Cleanup(f.conn.close)
	return f
}

func TestFinalizeLabelsAndTaintsControlPlanes(t *testing.T) {
	f := newKubeFixture(t)
	other := KubeTaint{Key: "example.com/gpu", Effect: "NoExecute"}
	f.kube.addNode("node-11", other)
	f.kube.addNode("node-12", controlPlaneTaint())
	f.kube.addNode("node-14")
	f.kube.mu.Lock()
	f.kube.nodes["node-12"].Metadata.Labels[LabelControlPlane] = ""
	f.kube.mu.Unlock()
	now := time.Now().UTC().Truncate(time.Second)
	var conds []api.Condition

	tests := []struct {
		name     string
		register string
		schedule bool
		calls    []string
		again    bool
		taints   map[string][]KubeTaint
	}{
		{
			name: "first pass; node-13 not registered yet",
			calls: []string{
				"GET /api/v1/nodes/node-11", "PATCH /api/v1/nodes/node-11",
				"GET /api/v1/nodes/node-12",
				"GET /api/v1/nodes/node-13",
			},
			again:  true,
			taints: map[string][]KubeTaint{"node-11": {other, controlPlaneTaint()}, "node-12": {controlPlaneTaint()}, "node-14": nil},
		},
		{
			name:   "done nodes are not read again",
			calls:  []string{"GET /api/v1/nodes/node-13"},
			again:  true,
			taints: map[string][]KubeTaint{"node-11": {other, controlPlaneTaint()}},
		},
		{
			name:     "node-13 registers",
			register: "node-13",
			calls:    []string{"GET /api/v1/nodes/node-13", "PATCH /api/v1/nodes/node-13"},
			taints:   map[string][]KubeTaint{"node-13": {controlPlaneTaint()}},
		},
		{name: "nothing left to do"},
		{
			name:     "scheduleOnControlPlane turned on",
			schedule: true,
			calls: []string{
				"GET /api/v1/nodes/node-11", "PATCH /api/v1/nodes/node-11",
				"GET /api/v1/nodes/node-12", "PATCH /api/v1/nodes/node-12",
				"GET /api/v1/nodes/node-13", "PATCH /api/v1/nodes/node-13",
			},
			taints: map[string][]KubeTaint{"node-11": {other}, "node-12": {}, "node-13": {}},
		},
		{name: "scheduleOnControlPlane stays on", schedule: true},
		{
			name:   "scheduleOnControlPlane turned off",
			calls:  []string{"GET /api/v1/nodes/node-11", "PATCH /api/v1/nodes/node-11", "GET /api/v1/nodes/node-12", "PATCH /api/v1/nodes/node-12", "GET /api/v1/nodes/node-13", "PATCH /api/v1/nodes/node-13"},
			taints: map[string][]KubeTaint{"node-11": {other, controlPlaneTaint()}, "node-13": {controlPlaneTaint()}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.register != "" {
				f.kube.addNode(tc.register)
			}
			f.c.Spec.ScheduleOnControlPlane = tc.schedule
			var again bool
			conds, again = f.o.finalize(context.Background(), f.conn, f.c, conds, now)
			if got := f.kube.takeCalls(); !slices.Equal(got, tc.calls) {
				t.Errorf("calls = %q, want %q", got, tc.calls)
			}
			if again != tc.again {
				t.Errorf("again = %v, want %v", again, tc.again)
			}
			for node, want := range tc.taints {
				n, _ := f.kube.node(node)
				if !slices.Equal(n.Spec.Taints, want) && len(n.Spec.Taints)+len(want) > 0 {
					t.Errorf("%s taints = %+v, want %+v", node, n.Spec.Taints, want)
				}
				_, labeled := n.Metadata.Labels[LabelControlPlane]
				if cp := node != "node-14"; labeled != cp {
					t.Errorf("%s labeled %v, want %v", node, labeled, cp)
				}
			}
		})
	}
	for _, id := range []string{"node-11", "node-12", "node-13"} {
		if c := findCondition(conds, CondFinalizedPrefix+id); c == nil || c.Status != StatusTrue || c.Reason != ReasonTainted {
			t.Errorf("%s%s = %+v, want True %s", CondFinalizedPrefix, id, c, ReasonTainted)
		}
	}

	// A control plane that left the spec loses its condition.
	f.c.Spec.ControlPlaneNodes = f.c.Spec.ControlPlaneNodes[:2]
	conds, _ = f.o.finalize(context.Background(), f.conn, f.c, conds, now)
	if c := findCondition(conds, CondFinalizedPrefix+"node-13"); c != nil {
		t.Errorf("condition of a removed control plane kept: %+v", c)
	}
}

func TestDrainEvictsAllButDaemonSetAndMirrorPods(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Second)
	tests := []struct {
		name     string
		register bool
		stuck    bool
		noAPI    bool
		passes   []time.Duration
		done     []bool
		reason   string
		words    []string
	}{
		{name: "drained once the pods left", register: true, passes: []time.Duration{0, 5 * time.Second, 6 * time.Second}, done: []bool{false, true, true}, reason: ReasonDrained},
		{name: "gives up after the timeout", register: true, stuck: true, passes: []time.Duration{0, 30 * time.Second, 61 * time.Second}, done: []bool{false, false, true}, reason: ReasonDrainTimedOut, words: []string{"gave up", "default/stuck"}},
		{name: "never registered", passes: []time.Duration{0}, done: []bool{true}, reason: ReasonDrained, words: []string{"not registered"}},
		{name: "no API answers", noAPI: true, passes: []time.Duration{0, 61 * time.Second}, done: []bool{false, true}, reason: ReasonDrainTimedOut, words: []string{"gave up", "last error", "GET"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newKubeFixture(t)
			if tc.noAPI {
				f.conn = deadConn(t)
			}
			if tc.register {
				f.kube.addNode("node-14")
				f.kube.addPod("node-14", &fakePod{namespace: "kube-system", name: "proxy", owner: "DaemonSet"})
				f.kube.addPod("node-14", &fakePod{namespace: "kube-system", name: "static", mirror: true, owner: "Node"})
				f.kube.addPod("node-14", &fakePod{namespace: "default", name: "web", owner: "ReplicaSet"})
				f.kube.addPod("node-14", &fakePod{namespace: "default", name: "guarded", owner: "ReplicaSet", tooMany: 2})
				f.kube.addPod("node-14", &fakePod{namespace: "default", name: "stuck", stuck: tc.stuck})
			}
			var conds []api.Condition
			for i, d := range tc.passes {
				var done bool
				conds, done = f.o.drainStep(context.Background(), f.conn, "lab", "node-14", conds, start.Add(d))
				if done != tc.done[i] {
					t.Fatalf("pass %d: done = %v, want %v; conditions %+v", i, done, tc.done[i], conds)
				}
				calls := f.kube.takeCalls()
				if i == 0 && tc.register {
					evictions := []string{}
					for _, c := range calls {
						if strings.HasSuffix(c, "/eviction") {
							evictions = append(evictions, c)
						}
					}
					want := []string{
						"POST /api/v1/namespaces/default/pods/web/eviction",
						"POST /api/v1/namespaces/default/pods/guarded/eviction",
						"POST /api/v1/namespaces/default/pods/guarded/eviction",
						"POST /api/v1/namespaces/default/pods/guarded/eviction",
						"POST /api/v1/namespaces/default/pods/stuck/eviction",
					}
					if !slices.Equal(evictions, want) {
						t.Errorf("evictions = %q, want %q (429 twice for guarded)", evictions, want)
					}
					if !slices.Contains(calls, "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode-14") {
						t.Errorf("calls %q do not list the node's pods", calls)
					}
				}
				if i > 0 && tc.done[i-1] && len(calls) > 0 {
					t.Errorf("pass %d after the drain ended called the API: %q", i, calls)
				}
			}
			cond := findCondition(conds, CondDrainedPrefix+"node-14")
			if cond == nil || cond.Reason != tc.reason {
				t.Fatalf("condition = %+v, want reason %s", cond, tc.reason)
			}
			if cond.Since != start.Format(time.RFC3339) && tc.reason != ReasonDrained {
				t.Errorf("since %s, want the drain's start %s", cond.Since, start.Format(time.RFC3339))
			}
			for _, w := range tc.words {
				if !strings.Contains(cond.Message, w) {
					t.Errorf("message %q lacks %q", cond.Message, w)
				}
			}
			if n, ok := f.kube.node("node-14"); ok && !n.Spec.Unschedulable {
				t.Error("node-14 not cordoned")
			}
		})
	}
}

// deadConn dials an API nobody serves.
func deadConn(t *testing.T) *kubeConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return &kubeConn{dial: func(*api.KubernetesCluster, *pki.ClusterSecrets) (KubeClient, error) {
		return &HTTPKube{Base: "https://" + addr, Client: &http.Client{Timeout: DefaultKubeTimeout}}, nil
	}}
}

func TestDeleteKubeNode(t *testing.T) {
	f := newKubeFixture(t)
	f.kube.addNode("node-14")
	published := time.Now().UTC()
	st := &storedState{}
	st.obj.ModifyTime = published.Format(time.RFC3339Nano)
	tests := []struct {
		name    string
		dead    bool
		after   time.Duration
		wantErr bool
		calls   []string
	}{
		{name: "deletes the node", calls: []string{"DELETE /api/v1/nodes/node-14"}},
		{name: "a node already gone is fine", calls: []string{"DELETE /api/v1/nodes/node-14"}},
		{name: "no API: retried", dead: true, after: 30 * time.Second, wantErr: true},
		{name: "no API for longer than the drain timeout: given up", dead: true, after: 61 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := f.conn
			if tc.dead {
				conn = deadConn(t)
			}
			err := f.o.deleteKubeNode(context.Background(), conn, "lab", "node-14", st, published.Add(tc.after))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if got := f.kube.takeCalls(); !slices.Equal(got, tc.calls) {
				t.Errorf("calls = %q, want %q", got, tc.calls)
			}
		})
	}
	if _, ok := f.kube.node("node-14"); ok {
		t.Error("node-14 still registered")
	}
}
