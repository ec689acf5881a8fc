package gitops

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/gitops"
)

const updateHCL = `resource "kcore_cluster_update" "os" {
  name      = "release-0-5-0"
  version   = "0.5.0"
  all_nodes = true
}
`

// synced waits until the source applied commit.
func synced(commit string) func(apiv1.GitSourceView) error {
	return func(v apiv1.GitSourceView) error {
		if v.Source.Status.Commit != commit {
			return fmt.Errorf("synced %q, want %s (last error %q)", v.Source.Status.Commit, commit, v.Source.Status.LastError)
		}
		return nil
	}
}

// owner returns a stored object's GitSource and commit annotations.
func owner(kc *api.KubernetesCluster) (string, string) {
	return kc.Metadata.Annotations[api.AnnotationGitSource], kc.Metadata.Annotations[api.AnnotationGitCommit]
}

// TestFollowCommits follows a real repository through a create, a change,
// a disruptive removal that waits for approval, a hand-made change that
// shows as drift, and a commit that empties the directory.
func TestFollowCommits(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	ctx := t.Context()
	for _, n := range []string{"201", "202", "203"} {
		e.putNode(admin, "node-"+n, "192.168.41."+n)
	}

	// A cluster made by hand, outside git.
	manual := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{handMade("manual")}}
	resp, err := admin.Plan(ctx, manual)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Apply(ctx, manual, resp.Plan.Index, resp.Hash); err != nil {
		t.Fatal(err)
	}

	r := newRepo(t)
	r.write("clusters/edge.yaml", clusterYAML("edge", "10.97.0.10", "10.245.0.0/16", 201))
	r.write("clusters/updates/os.hcl", updateHCL)
	r.write("README.md", "not a manifest\n")
	c1 := r.commit("edge and an update")

	spec := api.GitSourceSpec{Repo: r.dir, Branch: "main", Path: "clusters", Interval: "1h", MaxDisruption: "restart-unit"}
	if _, err := admin.PutGitSource(ctx, "fleet", spec); err != nil {
		t.Fatal(err)
	}
	v := e.waitSource(admin, "fleet", synced(c1))
	edge, ok := e.cluster("edge")
	if !ok {
		t.Fatal("commit 1 did not create edge")
	}
	if src, commit := owner(edge); src != "fleet" || commit != c1 {
		t.Fatalf("edge annotations %v, want source fleet and commit %s", edge.Metadata.Annotations, c1)
	}
	if o, ok := e.c.WaitLeader().Node().State().Get(api.KindClusterUpdate, "release-0-5-0"); !ok || api.StoredSpecHash(o.Data) == "" {
		t.Fatal("commit 1 did not store the HCL ClusterUpdate")
	}
	if len(v.Source.Status.Owned) != 2 || len(v.Drift) != 0 {
		t.Fatalf("owned %+v drift %+v, want edge and the update, no drift", v.Source.Status.Owned, v.Drift)
	}
	audit, err := admin.Audit(ctx, client.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(audit, func(a apiv1.AuditEntry) bool { return a.Commit == c1 && a.Subject == "gitops/fleet" && a.Result == 200 }) {
		t.Fatalf("no audit entry records commit %s", c1)
	}

	// A change (restart-unit, within the policy) and a new cluster.
	e.ready("edge")
	r.write("clusters/edge.yaml", clusterYAML("edge", "10.97.0.53", "10.245.0.0/16", 201))
	r.write("clusters/edge2.yaml", clusterYAML("edge2", "10.97.0.10", "10.246.0.0/16", 202))
	c2 := r.commit("change edge, add edge2")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c2))
	if edge, _ = e.cluster("edge"); edge.Spec.ClusterDNS != "10.97.0.53" || edge.Metadata.Annotations[api.AnnotationGitCommit] != c2 {
		t.Fatalf("edge after commit 2: dns %s annotations %v", edge.Spec.ClusterDNS, edge.Metadata.Annotations)
	}

	// Removing a file deletes a cluster: over the policy, it waits.
	e.ready("edge")
	e.ready("edge2")
	r.git("rm", "-q", "clusters/edge2.yaml")
	c3 := r.commit("remove edge2")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	v = e.waitSource(admin, "fleet", func(v apiv1.GitSourceView) error {
		if p := v.Source.Status.Pending; p == nil || p.Commit != c3 || p.Reason != api.GitPendingApproval {
			return fmt.Errorf("pending %+v, want commit %s awaiting approval", p, c3)
		}
		return nil
	})
	if v.Source.Status.Pending.Disruption != api.GitDisruptionDelete {
		t.Fatalf("pending disruption %q, want delete", v.Source.Status.Pending.Disruption)
	}
	if kc, _ := e.cluster("edge2"); kc.Status.Phase == api.PhaseDeleting {
		t.Fatal("edge2 was pruned before approval")
	}
	if _, err := admin.ApproveGitCommit(ctx, "fleet", "0000000"); err == nil {
		t.Fatal("approving another commit was accepted")
	}
	if _, err := admin.ApproveGitCommit(ctx, "fleet", c3[:8]); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c3))
	if kc, _ := e.cluster("edge2"); kc.Status.Phase != api.PhaseDeleting {
		t.Fatalf("edge2 phase %s after approval, want deleting", kc.Status.Phase)
	}
	if kc, _ := e.cluster("manual"); kc.Status.Phase == api.PhaseDeleting {
		t.Fatal("the hand-made cluster was pruned")
	}

	// A hand-made change through plan/apply shows as drift.
	changed := *edge
	changed.Metadata.Annotations = nil
	changed.Spec.ClusterDNS = "10.97.0.99"
	changed.Status = api.ClusterStatus{}
	req := apiv1.PlanRequest{Clusters: []api.KubernetesCluster{changed}}
	if resp, err = admin.Plan(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Apply(ctx, req, resp.Plan.Index, resp.Hash); err != nil {
		t.Fatal(err)
	}
	v = e.source(e.client(apiv1.RoleViewer), "fleet")
	if len(v.Drift) != 1 || v.Drift[0].Name != "edge" || v.Drift[0].Reason != apiv1.DriftChanged {
		t.Fatalf("drift %+v, want edge changed", v.Drift)
	}
	if edge, _ = e.cluster("edge"); edge.Metadata.Annotations[api.AnnotationGitSource] != "fleet" {
		t.Fatal("a hand-made apply dropped the source's ownership")
	}

	// A commit that empties the directory prunes nothing.
	e.ready("edge")
	r.git("rm", "-q", "-r", "clusters")
	c4 := r.commit("empty the directory")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	v = e.waitSource(admin, "fleet", synced(c4))
	if kc, _ := e.cluster("edge"); kc.Status.Phase == api.PhaseDeleting {
		t.Fatal("an empty commit pruned edge")
	}
	if !slices.ContainsFunc(v.Source.Status.Conditions, func(c api.Condition) bool { return c.Reason == gitops.ReasonEmptyCommit }) {
		t.Fatalf("conditions %+v, want %s", v.Source.Status.Conditions, gitops.ReasonEmptyCommit)
	}
}

// TestBadRepository records a clear fetch error and goes on.
func TestBadRepository(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	spec := api.GitSourceSpec{Repo: "/nonexistent/repo.git", Branch: "main", Interval: "10s"}
	if _, err := admin.PutGitSource(t.Context(), "broken", spec); err != nil {
		t.Fatal(err)
	}
	v := e.waitSource(admin, "broken", func(v apiv1.GitSourceView) error {
		if v.Source.Status.LastError == "" {
			return errors.New("no error yet")
		}
		return nil
	})
	if !slices.ContainsFunc(v.Source.Status.Conditions, func(c api.Condition) bool {
		return c.Type == gitops.CondFetched && c.Status == "False" && c.Reason == gitops.ReasonFetchFailed
	}) {
		t.Fatalf("conditions %+v, want Fetched False %s", v.Source.Status.Conditions, gitops.ReasonFetchFailed)
	}
	if _, err := admin.PutGitSource(t.Context(), "bad", api.GitSourceSpec{Repo: "x", Branch: "main", Interval: "1s"}); err == nil {
		t.Fatal("an interval under the minimum was accepted")
	}
}

// handMade is a one-node cluster created outside git.
func handMade(name string) api.KubernetesCluster {
	return api.KubernetesCluster{
		Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: name},
		Spec: api.ClusterSpec{
			ClusterCIDR: "10.247.0.0/16", ServiceCIDR: "10.97.0.0/16", ClusterDNS: "10.97.0.10",
			APIServerEndpoint: "192.168.41.203:6443", ScheduleOnControlPlane: true,
			ControlPlaneNodes: []api.ClusterNode{{NodeID: "node-203", AdvertiseAddress: "192.168.41.203"}},
		},
	}
}
