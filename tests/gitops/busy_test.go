package gitops

import (
	"fmt"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/gitops"
)

// TestBusyClusterWaitsAlone: a commit that changes a cluster still
// bootstrapping and adds another applies the new one at once; the busy one
// follows once it is ready.
func TestBusyClusterWaitsAlone(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	ctx := t.Context()
	for _, n := range []string{"201", "202"} {
		e.putNode(admin, "node-"+n, "192.168.41."+n)
	}
	r := newRepo(t)
	r.write("edge.yaml", clusterYAML("edge", "10.97.0.10", "10.245.0.0/16", 201))
	c1 := r.commit("edge")
	spec := api.GitSourceSpec{Repo: r.dir, Branch: "main", Interval: "1h", MaxDisruption: "restart-unit"}
	if _, err := admin.PutGitSource(ctx, "fleet", spec); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c1))

	// edge is bootstrapping: its change waits, edge2 does not.
	r.write("edge.yaml", clusterYAML("edge", "10.97.0.53", "10.245.0.0/16", 201))
	r.write("edge2.yaml", clusterYAML("edge2", "10.97.0.10", "10.246.0.0/16", 202))
	c2 := r.commit("change edge, add edge2")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	v := e.waitSource(admin, "fleet", synced(c2))
	if _, ok := e.cluster("edge2"); !ok {
		t.Fatal("the busy cluster held back edge2")
	}
	if kc, _ := e.cluster("edge"); kc.Spec.ClusterDNS != "10.97.0.10" {
		t.Fatalf("edge changed while bootstrapping: dns %s", kc.Spec.ClusterDNS)
	}
	if !slices.ContainsFunc(v.Source.Status.Conditions, func(c api.Condition) bool { return c.Reason == gitops.ReasonBusy }) {
		t.Fatalf("conditions %+v, want %s", v.Source.Status.Conditions, gitops.ReasonBusy)
	}

	e.ready("edge")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", func(v apiv1.GitSourceView) error {
		if kc, _ := e.cluster("edge"); kc.Spec.ClusterDNS != "10.97.0.53" {
			return fmt.Errorf("edge dns %s, want 10.97.0.53 (status %+v)", kc.Spec.ClusterDNS, v.Source.Status.Conditions)
		}
		return nil
	})
}
