package gitops

import (
	"encoding/json"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// TestPruneRemovedUpdates: a ClusterUpdate the source created and whose
// file a commit removes is pruned once it is not under way (pending, done
// or failed); one still rolling is left alone without blocking the commit,
// and an update made by hand is never pruned.
func TestPruneRemovedUpdates(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")

	manual := apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "by-hand"},
		Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true}}}}
	resp, err := admin.Plan(ctx, manual)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Apply(ctx, manual, resp.Plan.Index, resp.Hash); err != nil {
		t.Fatal(err)
	}

	r := newRepo(t)
	r.write("updates/done.hcl", strings.ReplaceAll(updateHCL, "release-0-5-0", "finished"))
	r.write("updates/rolling.hcl", strings.ReplaceAll(updateHCL, "release-0-5-0", "rolling"))
	c1 := r.commit("two updates")
	if _, err := admin.PutGitSource(ctx, "fleet", api.GitSourceSpec{Repo: r.dir, Branch: "main", Path: "updates", Interval: "1h"}); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c1))
	e.setUpdatePhase("finished", rollout.PhaseDone)
	e.setUpdatePhase("rolling", rollout.PhaseRolling)

	r.git("rm", "-q", "updates/done.hcl", "updates/rolling.hcl")
	r.write("updates/keep.hcl", strings.ReplaceAll(updateHCL, "release-0-5-0", "keep"))
	c2 := r.commit("remove both updates")
	if _, err := admin.SyncGitSource(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	e.waitSource(admin, "fleet", synced(c2))
	st := e.c.WaitLeader().Node().State()
	if _, ok := st.Get(api.KindClusterUpdate, "finished"); ok {
		t.Error("the finished update whose file was removed is still stored")
	}
	for _, name := range []string{"rolling", "by-hand", "keep"} {
		if _, ok := st.Get(api.KindClusterUpdate, name); !ok {
			t.Errorf("update %s was pruned", name)
		}
	}
}

// setUpdatePhase writes a stored ClusterUpdate's phase through raft, as
// the roller would.
func (e *env) setUpdatePhase(name, phase string) {
	e.t.Helper()
	l := e.c.WaitLeader().Node()
	o, ok := l.State().Get(api.KindClusterUpdate, name)
	if !ok {
		e.t.Fatalf("update %s not stored", name)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		e.t.Fatal(err)
	}
	u.Status.Phase = phase
	data, err := json.Marshal(u)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd, err := store.Batch{Ops: []store.Op{{Put: &store.Put{Kind: api.KindClusterUpdate, Name: name, Data: data}}}}.Command()
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := l.Apply(e.t.Context(), cmd); err != nil {
		e.t.Fatal(err)
	}
}
