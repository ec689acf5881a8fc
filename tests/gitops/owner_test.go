package gitops

import (
	"fmt"
	"slices"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/gitops"
)

// TestOwnedElsewhere: a second source that declares a cluster the first
// one owns is refused and writes nothing; removing the first source leaves
// its clusters in place.
func TestOwnedElsewhere(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	r := newRepo(t)
	r.write("edge.yaml", clusterYAML("edge", "10.97.0.10", "10.245.0.0/16", 201))
	c1 := r.commit("edge")
	spec := api.GitSourceSpec{Repo: r.dir, Branch: "main", Interval: "1h"}
	if _, err := admin.PutGitSource(ctx, "first", spec); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "first", synced(c1))
	if _, err := admin.PutGitSource(ctx, "second", spec); err != nil {
		t.Fatal(err)
	}
	v := e.waitSource(admin, "second", func(v apiv1.GitSourceView) error {
		if !slices.ContainsFunc(v.Source.Status.Conditions, func(c api.Condition) bool { return c.Reason == gitops.ReasonOwnership }) {
			return fmt.Errorf("conditions %+v, want %s", v.Source.Status.Conditions, gitops.ReasonOwnership)
		}
		return nil
	})
	if v.Source.Status.Commit != "" || len(v.Source.Status.Owned) != 0 {
		t.Fatalf("second source applied %q and owns %+v", v.Source.Status.Commit, v.Source.Status.Owned)
	}
	if kc, _ := e.cluster("edge"); kc.Metadata.Annotations[api.AnnotationGitSource] != "first" {
		t.Fatalf("edge annotations %v, want owned by first", kc.Metadata.Annotations)
	}
	if _, err := admin.DeleteGitSource(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if kc, ok := e.cluster("edge"); !ok || kc.Status.Phase == api.PhaseDeleting {
		t.Fatal("removing the source deleted its cluster")
	}
	if _, ok := e.c.WaitLeader().Node().State().Get(api.KindGitSourceStatus, "first"); ok {
		t.Fatal("removing the source left its status")
	}
}
