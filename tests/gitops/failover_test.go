package gitops

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// TestNewLeaderFollows: after the leader stops, the new leader fetches the
// source when it takes over and applies the commit the old one had not seen.
func TestNewLeaderFollows(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	e.putNode(admin, "node-202", "192.168.41.202")
	r := newRepo(t)
	r.write("edge.yaml", clusterYAML("edge", "10.97.0.10", "10.245.0.0/16", 201))
	c1 := r.commit("edge")
	if _, err := admin.PutGitSource(ctx, "fleet", api.GitSourceSpec{Repo: r.dir, Branch: "main", Interval: "1h"}); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c1))

	// The old leader fetches only every hour: the commit reaches the
	// store because the new leader fetches when it takes over.
	r.write("edge2.yaml", clusterYAML("edge2", "10.97.0.10", "10.246.0.0/16", 202))
	c2 := r.commit("edge2")
	old := e.c.WaitLeader()
	for i, rep := range e.c.Replicas() {
		if rep == old {
			e.c.Stop(i)
		}
	}
	e.waitSource(admin, "fleet", synced(c2))
	if e.c.WaitLeader() == old {
		t.Fatal("the stopped replica still leads")
	}
	kc, ok := e.cluster("edge2")
	if !ok || kc.Metadata.Annotations[api.AnnotationGitCommit] != c2 || kc.Metadata.Generation != 1 {
		t.Fatalf("edge2 after failover: %v", kc)
	}
}
