package apply

import (
	"encoding/json"
	"errors"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
	kstore "kcore.dev/kcore/pkg/store"
	"kcore.dev/kcore/tests/apiserve"
)

// TestDeleteClusterUpdate: a ClusterUpdate is removed through plan and
// apply (a viewer may plan it but not apply it; an operator and a
// cluster-admin may), one whose rollout is under way is refused as
// update-in-progress, and an unknown name as update-not-found.
func TestDeleteClusterUpdate(t *testing.T) {
	e := newEnv(t)
	leader := apiserve.Of(e.c.WaitLeader()).Addr
	admin := e.client(apiv1.RoleClusterAdmin, leader)
	ctx := t.Context()
	e.putNode(admin, "node-201", "192.168.41.201")
	store := func(name, phase string) {
		t.Helper()
		req := apiv1.PlanRequest{Updates: []api.ClusterUpdate{{Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: name},
			Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true}}}}
		p, err := admin.Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Apply(ctx, req, p.Plan.Index, p.Hash); err != nil {
			t.Fatal(err)
		}
		if phase == "" {
			return
		}
		// The roller moved it on: write the phase as it would, through
		// raft (the API writes no ClusterUpdate outside plan and apply).
		u, _ := e.update(name)
		u.Status.Phase = phase
		data, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := kstore.Batch{Ops: []kstore.Op{{Put: &kstore.Put{Kind: api.KindClusterUpdate, Name: name, Data: data}}}}.Command()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.WaitLeader().Node().Apply(ctx, cmd); err != nil {
			t.Fatalf("store phase %s: %v", phase, err)
		}
		e.c.WaitCaughtUp()
	}
	store("done", rollout.PhaseDone)
	del := func(c *client.Client, name string) (*apiv1.PlanResponse, error) {
		req := apiv1.PlanRequest{DeleteUpdates: []string{name}}
		p, err := c.Plan(ctx, req)
		if err != nil {
			t.Fatalf("plan delete %s: %v", name, err)
		}
		_, err = c.Apply(ctx, req, p.Plan.Index, p.Hash)
		return p, err
	}

	for _, tc := range []struct {
		role string
		ok   bool
	}{{apiv1.RoleViewer, false}, {apiv1.RoleOperator, true}, {apiv1.RoleClusterAdmin, true}} {
		t.Run(tc.role, func(t *testing.T) {
			if tc.ok {
				store("done", rollout.PhaseDone)
			}
			c := e.client(tc.role, leader)
			p, err := del(c, "done")
			if len(p.Updates) != 1 || p.Updates[0].Action != apiv1.UpdateDelete {
				t.Fatalf("plan = %+v", p.Updates)
			}
			if !tc.ok {
				if p.Forbidden == "" || !errors.Is(err, client.ErrForbidden) {
					t.Fatalf("%s delete = %v (forbidden %q), want forbidden", tc.role, err, p.Forbidden)
				}
				if _, ok := e.update("done"); !ok {
					t.Fatal("a refused delete removed the update")
				}
				return
			}
			if err != nil {
				t.Fatalf("%s delete: %v", tc.role, err)
			}
			if _, ok := e.update("done"); ok {
				t.Fatal("the update is still stored")
			}
		})
	}

	store("rolling", rollout.PhaseRolling)
	p, err := del(admin, "rolling")
	if !p.Blocked() || p.Plan.Blocking[0].Code != plan.CodeUpdateInProgress || err == nil {
		t.Fatalf("delete of a rolling update = %+v, %v; want blocked update-in-progress", p.Plan.Blocking, err)
	}
	if _, ok := e.update("rolling"); !ok {
		t.Fatal("a blocked delete removed the update")
	}
	p, _ = del(admin, "nope")
	if !p.Blocked() || p.Plan.Blocking[0].Code != plan.CodeUpdateNotFound {
		t.Fatalf("delete of an unknown update = %+v", p.Plan.Blocking)
	}
}

// update reads a stored ClusterUpdate from the leader.
func (e *env) update(name string) (api.ClusterUpdate, bool) {
	var u api.ClusterUpdate
	o, ok := e.c.WaitLeader().Node().State().Get(api.KindClusterUpdate, name)
	if !ok {
		return u, false
	}
	if err := json.Unmarshal(o.Data, &u); err != nil {
		e.t.Fatal(err)
	}
	return u, true
}
