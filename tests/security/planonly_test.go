package security

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/server"
)

// update is a valid ClusterUpdate manifest of every node.
func update(name string) api.ClusterUpdate {
	return api.ClusterUpdate{APIVersion: api.APIVersion, Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: name},
		Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true}}
}

// seedUpdate stores update(name) in phase through raft, as apply and the
// roller would, and returns the index it was applied at.
func (e *env) seedUpdate(name, phase string) uint64 {
	e.t.Helper()
	u := update(name)
	u.Default()
	u.Status.Phase = phase
	return e.c.Seed(api.KindClusterUpdate, name, u)
}

// planApply plans req as c and applies exactly that plan.
func (e *env) planApply(c *http.Client, req apiv1.PlanRequest) apiv1.ApplyResponse {
	e.t.Helper()
	r := e.call(c, e.leader(), http.MethodPost, "/v1/plan", req)
	want(e.t, r, http.StatusOK, "")
	var p apiv1.PlanResponse
	r.decode(e.t, &p)
	r = e.call(c, e.leader(), http.MethodPost, "/v1/apply", apiv1.ApplyRequest{Request: req, Index: p.Plan.Index, Hash: p.Hash})
	want(e.t, r, http.StatusOK, "")
	var out apiv1.ApplyResponse
	r.decode(e.t, &out)
	return out
}

// modifyIndex is the stored object's ModifyIndex on the leader, 0 when
// there is none.
func (e *env) modifyIndex(kind, name string) uint64 {
	o, _ := e.c.WaitLeader().Node().State().Get(kind, name)
	return o.ModifyIndex
}

// TestRawClusterWritesRefusedForEveryRole: a PUT or DELETE of
// /v1/objects for a KubernetesCluster (under any alias of the kind) or a
// ClusterUpdate is refused for every role, cluster-admin included, through
// the leader and through a follower: 405 plan-required naming the command
// to use, audited under the caller's name, nothing stored. A caller
// without a certificate gets 401 and writes nothing to raft.
func TestRawClusterWritesRefusedForEveryRole(t *testing.T) {
	e := newEnv(t, 3)
	e.seedCluster("c1")
	e.seedUpdate("u1", rollout.PhasePending)
	e.c.WaitCaughtUp()
	c1, u1 := e.modifyIndex(api.KindKubernetesCluster, "c1"), e.modifyIndex(api.KindClusterUpdate, "u1")
	updateJSON, _ := json.Marshal(update("u1"))
	writes := []struct {
		method, kind, name, body, use string
	}{
		{http.MethodPut, api.KindKubernetesCluster, "c1", strings.Replace(clusterJSON("c1"), "10.0.0.10:6443", "10.0.0.20:6443", 1), "kctl kubernetes apply -f FILE"},
		{http.MethodPut, "kubernetes-cluster", "c2", clusterJSON("c2"), "kctl kubernetes apply -f FILE"},
		{http.MethodDelete, api.KindKubernetesCluster, "c1", "", "kctl kubernetes delete c1"},
		{http.MethodDelete, "kubernetes_cluster", "c1", "", "kctl kubernetes delete c1"},
		{http.MethodPut, api.KindClusterUpdate, "u1", string(updateJSON), "kctl apply -f FILE"},
		{http.MethodDelete, api.KindClusterUpdate, "u1", "", "kctl update pause u1"},
	}

	anon := e.clientFor(pki.KeyPair{})
	last := e.raftLast()
	for _, w := range writes {
		for _, a := range []bool{false, true} {
			via := e.leader()
			if a {
				via = e.follower()
			}
			want(t, e.call(anon, via, w.method, apiv1.ObjectPath(w.kind, w.name), w.body), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
		}
	}
	if now := e.raftLast(); now != last {
		t.Fatalf("anonymous writes moved raft from %d to %d", last, now)
	}

	for i, role := range server.Roles() {
		caller := e.client(role, "caller-"+role)
		for j, w := range writes {
			via := e.leader()
			if (i+j)%2 == 1 {
				via = e.follower()
			}
			r := e.call(caller, via, w.method, apiv1.ObjectPath(w.kind, w.name), w.body)
			want(t, r, http.StatusMethodNotAllowed, apiv1.CodePlanRequired)
			if msg := r.errorBody(t).Message; !strings.Contains(msg, w.use) {
				t.Errorf("%s %s %s/%s: message %q does not name %q", role, w.method, w.kind, w.name, msg, w.use)
			}
			e.findAudit(func(a apiv1.AuditEntry) bool {
				return a.Subject == "caller-"+role && a.Role == role && a.Method == w.method && a.Object == w.kind+"/"+w.name &&
					a.Result == http.StatusMethodNotAllowed && a.Code == apiv1.CodePlanRequired
			})
		}
	}
	if now := e.modifyIndex(api.KindKubernetesCluster, "c1"); now != c1 {
		t.Errorf("refused writes changed c1 (%d → %d)", c1, now)
	}
	if now := e.modifyIndex(api.KindClusterUpdate, "u1"); now != u1 {
		t.Errorf("refused writes changed u1 (%d → %d)", u1, now)
	}
	if now := e.modifyIndex(api.KindKubernetesCluster, "c2"); now != 0 {
		t.Errorf("a refused write stored c2 at %d", now)
	}
}

// TestAdminCannotChangeClusterCidrAroundThePlan is the attack: a
// cluster-admin PUTs a stored cluster's manifest with another clusterCidr,
// a field the plan refuses to change, straight to /v1/objects. The write
// used to be stored; now it is refused and audited and the stored cluster
// keeps its CIDR.
func TestAdminCannotChangeClusterCidrAroundThePlan(t *testing.T) {
	e := newEnv(t, 1)
	e.seedCluster("c1")
	admin := e.client(apiv1.RoleClusterAdmin, "mallory")
	changed := strings.Replace(clusterJSON("c1"), "10.244.0.0/16", "10.245.0.0/16", 1)
	want(t, e.call(admin, e.leader(), http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), changed), http.StatusMethodNotAllowed, apiv1.CodePlanRequired)
	o, ok := e.c.WaitLeader().Node().State().Get(api.KindKubernetesCluster, "c1")
	if !ok {
		t.Fatal("c1 is gone")
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal(o.Data, &kc); err != nil {
		t.Fatal(err)
	}
	if kc.Spec.ClusterCIDR != "10.244.0.0/16" {
		t.Fatalf("a raw PUT changed clusterCidr to %s", kc.Spec.ClusterCIDR)
	}
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "mallory" && a.Object == "KubernetesCluster/c1" && a.Code == apiv1.CodePlanRequired
	})
}

// TestUpdateRoutesEnforceRoles: each update action route lets operator
// and cluster-admin make its transition, audited by the action's name;
// viewer, node and controller are refused with 403 and audited, and the
// update does not change; a caller without a certificate gets 401 and
// writes nothing to raft.
func TestUpdateRoutesEnforceRoles(t *testing.T) {
	e := newEnv(t, 1)
	routes := []struct{ action, audit, from, to string }{
		{apiv1.UpdateApprove, "approve update", rollout.PhasePending, rollout.PhaseApproved},
		{apiv1.UpdatePause, "pause update", rollout.PhaseApproved, rollout.PhasePaused},
		{apiv1.UpdateResume, "resume update", rollout.PhasePaused, rollout.PhaseApproved},
		{apiv1.UpdateRollback, "roll back update", rollout.PhasePaused, rollout.PhaseRollingBack},
	}
	allowed := map[string]bool{apiv1.RoleClusterAdmin: true, apiv1.RoleOperator: true}
	for _, rt := range routes {
		for _, role := range server.Roles() {
			name := fmt.Sprintf("%s-%s", rt.action, role)
			e.seedUpdate(name, rt.from)
			before := e.modifyIndex(api.KindClusterUpdate, name)
			r := e.call(e.client(role, "caller-"+role), e.leader(), http.MethodPost, apiv1.UpdateActionPath(name, rt.action), nil)
			status, code, phase := http.StatusForbidden, apiv1.CodeForbidden, rt.from
			if allowed[role] {
				status, code, phase = http.StatusOK, "", rt.to
			}
			want(t, r, status, code)
			e.findAudit(func(a apiv1.AuditEntry) bool {
				return a.Subject == "caller-"+role && a.Action == rt.audit && a.Object == api.KindClusterUpdate+"/"+name && a.Result == status
			})
			o, _ := e.c.WaitLeader().Node().State().Get(api.KindClusterUpdate, name)
			var u api.ClusterUpdate
			if err := json.Unmarshal(o.Data, &u); err != nil {
				t.Fatal(err)
			}
			if u.Status.Phase != phase || (!allowed[role] && o.ModifyIndex != before) {
				t.Errorf("%s by %s: phase %s at %d (was %d), want %s", rt.action, role, u.Status.Phase, o.ModifyIndex, before, phase)
			}
		}
		name := rt.action + "-anonymous"
		e.seedUpdate(name, rt.from)
		last := e.raftLast()
		want(t, e.call(e.clientFor(pki.KeyPair{}), e.leader(), http.MethodPost, apiv1.UpdateActionPath(name, rt.action), nil), http.StatusUnauthorized, apiv1.CodeUnauthenticated)
		if now := e.raftLast(); now != last {
			t.Errorf("anonymous %s moved raft from %d to %d", rt.action, last, now)
		}
	}
}
