package apply

import (
	"errors"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/plan"

	"kcore.dev/kcore/tests/apiserve"
)

// TestApplyThroughFollower plans and applies on a follower: both are
// forwarded to the leader, the apply is one raft batch (plus its audit
// entry) that every replica applies, and a re-plan is a no-op whose apply
// commits nothing.
func TestApplyThroughFollower(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin, e.follower())
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("edge", "10.97.0.10"), edge("edge2", "10.97.0.10")}}
	req.Clusters[1].Spec.ClusterCIDR = "10.246.0.0/16"

	resp, err := admin.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Blocked() || !resp.Changes() || resp.Plan.Counts()[plan.ActionCreate] != 2 {
		t.Fatalf("plan = %+v", resp.Plan)
	}
	out, err := admin.Apply(ctx, req, resp.Plan.Index, resp.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if out.Clusters["edge"] != api.PhaseBootstrapping || out.Clusters["edge2"] != api.PhaseBootstrapping {
		t.Fatalf("apply = %+v", out)
	}
	e.c.WaitCaughtUp()
	for i := range 3 {
		a, ia, okA := e.cluster(i, "edge")
		_, ib, okB := e.cluster(i, "edge2")
		if !okA || !okB || ia != out.Index || ib != out.Index || a.Status.Phase != api.PhaseBootstrapping {
			t.Fatalf("replica %d: edge %v@%d edge2 %v@%d, want both at batch index %d", i, okA, ia, okB, ib, out.Index)
		}
	}

	again, err := admin.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changes() {
		t.Fatalf("re-plan has changes: %+v", again.Plan.Clusters)
	}
	before := e.index()
	noop, err := admin.Apply(ctx, req, again.Plan.Index, again.Hash)
	if err != nil || noop.Index != 0 {
		t.Fatalf("no-op apply = %+v, %v", noop, err)
	}
	if e.index() != before {
		t.Fatalf("no-op apply moved the index %d → %d", before, e.index())
	}
}

// TestStaleAndBlocked covers the apply refusals: a tampered hash, a write
// to a touched object between plan and apply, a blocked plan.
func TestStaleAndBlocked(t *testing.T) {
	e := newEnv(t)
	leader := apiserve.Of(e.c.WaitLeader()).Addr
	admin := e.client(apiv1.RoleClusterAdmin, leader)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("edge", "10.97.0.10")}}
	resp, err := admin.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := admin.Apply(ctx, req, resp.Plan.Index, "0000"); !client.IsStalePlan(err) {
		t.Fatalf("tampered hash = %v, want stale-plan", err)
	}
	if _, err := admin.Apply(ctx, req, resp.Plan.Index+1_000_000, resp.Hash); !client.IsStalePlan(err) {
		t.Fatalf("future index = %v, want stale-plan", err)
	}
	var ae *client.APIError
	if _, err := admin.Apply(ctx, req, resp.Plan.Index, "0000"); !errors.As(err, &ae) || ae.Status != 409 {
		t.Fatalf("stale plan answered %v, want 409", err)
	}

	// Someone else plans and applies the same cluster in between: the
	// first create is stale.
	other, err := admin.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Apply(ctx, req, other.Plan.Index, other.Hash); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Apply(ctx, req, resp.Plan.Index, resp.Hash); !client.IsStalePlan(err) {
		t.Fatalf("concurrent create = %v, want stale-plan", err)
	}

	// Stand in for the orchestrator (through raft): the cluster is ready.
	e.c.WaitCaughtUp()
	kc, _, _ := e.cluster(0, "edge")
	kc.Status.Phase = api.PhaseReady
	e.c.Seed(api.KindKubernetesCluster, "edge", kc)

	// The cluster's phase moving (the orchestrator's write, through raft)
	// makes an update plan stale.
	upd := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("edge", "10.97.0.53")}}
	p2, err := admin.Plan(ctx, upd)
	if err != nil {
		t.Fatal(err)
	}
	kc.Status.Phase = api.PhaseDegraded
	e.c.Seed(api.KindKubernetesCluster, "edge", kc)
	if _, err := admin.Apply(ctx, upd, p2.Plan.Index, p2.Hash); !client.IsStalePlan(err) {
		t.Fatalf("phase changed in between = %v, want stale-plan", err)
	}
	kc.Status.Phase = api.PhaseReady
	e.c.Seed(api.KindKubernetesCluster, "edge", kc)

	// A health check's write in between (its time only) leaves the
	// reviewed plan valid, and apply keeps what it wrote.
	p3, err := admin.Plan(ctx, upd)
	if err != nil {
		t.Fatal(err)
	}
	kc.Status.LastHealthCheck = "2026-11-29T22:00:00Z"
	e.c.Seed(api.KindKubernetesCluster, "edge", kc)
	if _, err := admin.Apply(ctx, upd, p3.Plan.Index, p3.Hash); err != nil {
		t.Fatalf("update plan after a health check's write: %v", err)
	}
	e.c.WaitCaughtUp()
	if kc, _, _ = e.cluster(0, "edge"); kc.Status.Phase != api.PhaseUpdating || kc.Spec.ClusterDNS != "10.97.0.53" || kc.Status.LastHealthCheck == "" {
		t.Fatalf("updated cluster = %+v / %+v", kc.Spec.ClusterDNS, kc.Status)
	}

	// A replace is planned but refused on apply.
	rreq := apiv1.PlanRequest{Clusters: upd.Clusters, Recreate: []string{"edge"}}
	rp, err := admin.Plan(ctx, rreq)
	if err != nil || rp.Plan.Counts()[plan.ActionReplace] != 1 {
		t.Fatalf("replace plan = %+v, %v", rp, err)
	}
	if _, err := admin.Apply(ctx, rreq, rp.Plan.Index, rp.Hash); !errors.Is(err, client.ErrBadRequest) {
		t.Fatalf("replace apply = %v, want bad-request", err)
	}

	// Blocked: a member that is not registered.
	bad := edge("lonely", "10.97.0.10")
	bad.Spec.ControlPlaneNodes[0] = api.ClusterNode{NodeID: "node-999", AdvertiseAddress: "192.168.41.99"}
	breq := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{bad}}
	bp, err := admin.Plan(ctx, breq)
	if err != nil || !bp.Blocked() {
		t.Fatalf("plan of an unregistered member = %+v, %v", bp, err)
	}
	st := e.c.WaitLeader().Node().State()
	before := st.KindIndex(api.KindKubernetesCluster)
	_, err = admin.Apply(ctx, breq, bp.Plan.Index, bp.Hash)
	issues, ok := client.BlockingIssues(err)
	if !ok || len(issues) == 0 || issues[0].Code != plan.CodeControlPlaneNotRegistered {
		t.Fatalf("blocked apply = %v (issues %+v)", err, issues)
	}
	if _, stored, _ := e.cluster(0, "lonely"); stored != 0 {
		t.Fatal("blocked plan stored the cluster")
	}
	if after := st.KindIndex(api.KindKubernetesCluster); after != before {
		t.Fatalf("blocked apply wrote a cluster: %d → %d", before, after)
	}
}

// TestRoles: a viewer plans but cannot apply; an operator applies
// ClusterUpdates and scales but not cluster manifests.
func TestRoles(t *testing.T) {
	e := newEnv(t)
	leader := apiserve.Of(e.c.WaitLeader()).Addr
	admin := e.client(apiv1.RoleClusterAdmin, leader)
	viewer := e.client(apiv1.RoleViewer, leader)
	operator := e.client(apiv1.RoleOperator, leader)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{edge("edge", "10.97.0.10")}}

	resp, err := viewer.Plan(ctx, req)
	if err != nil {
		t.Fatalf("viewer plan: %v", err)
	}
	if _, err := viewer.Apply(ctx, req, resp.Plan.Index, resp.Hash); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("viewer apply = %v, want forbidden", err)
	}
	if _, err := operator.Apply(ctx, req, resp.Plan.Index, resp.Hash); !errors.Is(err, client.ErrForbidden) {
		t.Fatalf("operator cluster apply = %v, want forbidden", err)
	}

	ureq := apiv1.PlanRequest{Updates: []api.ClusterUpdate{{
		Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "u1"},
		Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true},
	}}}
	up, err := operator.Plan(ctx, ureq)
	if err != nil || len(up.Updates) != 1 || up.Updates[0].Action != apiv1.UpdateCreate {
		t.Fatalf("operator update plan = %+v, %v", up, err)
	}
	out, err := operator.Apply(ctx, ureq, up.Plan.Index, up.Hash)
	if err != nil || len(out.Updates) != 1 {
		t.Fatalf("operator update apply = %+v, %v", out, err)
	}

	// A bad update blocks with its field path.
	bad := ureq
	bad.Updates = []api.ClusterUpdate{{Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "u2"}}}
	bp, err := operator.Plan(ctx, bad)
	if err != nil || !bp.Blocked() || bp.Plan.Blocking[0].Code != plan.CodeInvalidManifest {
		t.Fatalf("invalid update plan = %+v, %v", bp, err)
	}
}
