package gitops

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/store"
)

// fakeFetcher returns one commit with one cluster manifest and counts calls.
type fakeFetcher struct {
	commit string
	calls  int
	// data replaces the manifest when set.
	data string
}

func (f *fakeFetcher) Fetch(context.Context, Request) (Snapshot, error) {
	f.calls++
	data := edgeYAML
	if f.data != "" {
		data = f.data
	}
	return Snapshot{Commit: f.commit, Files: []File{{Path: "edge.yaml", Data: []byte(data)}}}, nil
}

const edgeYAML = `kind: KubernetesCluster
metadata:
  name: edge
spec:
  clusterCidr: 10.245.0.0/16
  serviceCidr: 10.97.0.0/16
  clusterDns: 10.97.0.10
  scheduleOnControlPlane: true
  apiServerEndpoint: 192.168.41.201:6443
  controlPlaneNodes:
    - nodeId: node-201
      advertiseAddress: 192.168.41.201
`

// fakePlanner plans one create with a restart-unit step and writes status
// into a real store State.
type fakePlanner struct {
	st      *store.State
	index   uint64
	plans   int
	applied int
}

func (p *fakePlanner) PlanGit(apiv1.PlanRequest) (*apiv1.PlanResponse, error) {
	p.plans++
	return &apiv1.PlanResponse{Plan: &plan.Plan{Clusters: []plan.ClusterPlan{{Name: "edge", Action: plan.ActionUpdate,
		Steps: []plan.Step{{Node: "node-201", Component: plan.ComponentKubelet, Disruption: plan.DisruptionRestartUnit}}}}}}, nil
}

func (p *fakePlanner) ApplyGit(context.Context, apiv1.GitStamp, apiv1.PlanRequest, *apiv1.PlanResponse) (uint64, error) {
	p.applied++
	return 1, nil
}

func (p *fakePlanner) WriteGitStatus(_ context.Context, name string, st api.GitSourceStatus, expect uint64) (uint64, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return 0, err
	}
	p.index++
	cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindGitSourceStatus, Name: name, Data: data, ExpectModifyIndex: store.Expect(expect)}}}}.Command()
	if err != nil {
		return 0, err
	}
	return p.index, p.st.Apply(p.index, cmd).Err
}

func (p *fakePlanner) put(t *testing.T, g api.GitSource) {
	t.Helper()
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	p.index++
	cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindGitSource, Name: g.Metadata.Name, Data: data}}}}.Command()
	if err != nil {
		t.Fatal(err)
	}
	if res := p.st.Apply(p.index, cmd); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func (p *fakePlanner) status(t *testing.T, name string) api.GitSourceStatus {
	t.Helper()
	var st api.GitSourceStatus
	o, ok := p.st.Get(api.KindGitSourceStatus, name)
	if !ok {
		t.Fatal("no status")
	}
	if err := json.Unmarshal(o.Data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The runner fetches on the interval, plans each commit once, holds a plan
// over the policy until the same plan is approved, and then applies it.
func TestRunnerIntervalOnePlanAndApproval(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := store.New(slog.New(slog.DiscardHandler))
	p := &fakePlanner{st: st}
	f := &fakeFetcher{commit: "c0ffee0000000000000000000000000000000001"}
	r := New(Config{State: st, Planner: p, Fetcher: f, Now: func() time.Time { return now }})
	g := api.GitSource{Metadata: api.ObjectMeta{Name: "fleet"}, Spec: api.GitSourceSpec{Repo: "/r", Branch: "main", Interval: "1m"}}
	g.Default()
	p.put(t, g)

	r.Pass(t.Context())
	pending := p.status(t, "fleet").Pending
	if f.calls != 1 || p.plans != 1 || p.applied != 0 || pending == nil || pending.Reason != api.GitPendingApproval || pending.Disruption != "restart-unit" {
		t.Fatalf("first pass: %d fetches, %d plans, %d applies, pending %+v, error %q", f.calls, p.plans, p.applied, pending, p.status(t, "fleet").LastError)
	}
	// Within the interval nothing is fetched; at it, the same commit is
	// fetched and not planned again.
	now = now.Add(time.Minute - time.Second)
	r.Pass(t.Context())
	now = now.Add(time.Second)
	r.Pass(t.Context())
	if f.calls != 2 || p.plans != 1 {
		t.Fatalf("after the interval: %d fetches (want 2), %d plans (want 1)", f.calls, p.plans)
	}
	// Approving the held plan applies it at once.
	g.Requests = api.GitRequests{Approve: pending.Commit, ApproveHash: pending.Hash}
	p.put(t, g)
	r.Pass(t.Context())
	if s := p.status(t, "fleet"); p.applied != 1 || s.Pending != nil || s.Commit != f.commit {
		t.Fatalf("after approval: %d applies, status %+v", p.applied, s)
	}
}

// An invalid manifest is reported with its file and line, and nothing is planned.
func TestRunnerInvalidManifest(t *testing.T) {
	st := store.New(slog.New(slog.DiscardHandler))
	p := &fakePlanner{st: st}
	f := &fakeFetcher{commit: "c0ffee0000000000000000000000000000000002", data: "kind: KubernetesCluster\nmetadata:\n  name: edge\nspec:\n  clusterCidr: nope\n"}
	r := New(Config{State: st, Planner: p, Fetcher: f})
	g := api.GitSource{Metadata: api.ObjectMeta{Name: "fleet"}, Spec: api.GitSourceSpec{Repo: "/r", Branch: "main"}}
	g.Default()
	p.put(t, g)
	r.Pass(t.Context())
	s := p.status(t, "fleet")
	if p.plans != 0 || s.Commit != "" || !strings.Contains(s.LastError, "edge.yaml:5: spec.clusterCidr") || condStatus(s, CondSynced) != "False" {
		t.Fatalf("%d plans, status %+v", p.plans, s)
	}
}
