package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/rollout"
	"kcore.dev/kcore/pkg/store"
)

// lastAudit is the newest audit entry.
func (e *etcdRouteEnv) lastAudit() apiv1.AuditEntry {
	items := e.be.st.List(apiv1.KindAudit)
	if len(items) == 0 {
		return apiv1.AuditEntry{}
	}
	var a apiv1.AuditEntry
	_ = json.Unmarshal(items[len(items)-1].Data, &a)
	return a
}

// seedUpdate stores ClusterUpdate name in phase through the store, as plan
// and apply and the roller do, and returns its ModifyIndex.
func (e *etcdRouteEnv) seedUpdate(name, phase string) uint64 {
	e.t.Helper()
	u := api.ClusterUpdate{APIVersion: api.APIVersion, Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: name},
		Spec: api.UpdateSpec{Version: "0.5.0", AllNodes: true}, Status: api.UpdateStatus{Phase: phase}}
	u.Default()
	data, _ := json.Marshal(u)
	cmd, _ := store.Put{Kind: api.KindClusterUpdate, Name: name, Data: data}.Command()
	res, err := e.be.Apply(context.Background(), cmd)
	if err != nil || res.Err != nil {
		e.t.Fatalf("seed update %s: %v %v", name, err, res.Err)
	}
	return res.Index
}

// storedUpdate reads ClusterUpdate name from the store.
func (e *etcdRouteEnv) storedUpdate(name string) (api.ClusterUpdate, uint64) {
	e.t.Helper()
	o, ok := e.be.st.Get(api.KindClusterUpdate, name)
	if !ok {
		e.t.Fatalf("update %s not stored", name)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		e.t.Fatal(err)
	}
	return u, o.ModifyIndex
}

// TestUpdateActionsMoveTheUpdateAndAuditByName: each update route makes
// its rollout transition on the stored update, answers the phases, and
// is audited under its action's name.
func TestUpdateActionsMoveTheUpdateAndAuditByName(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{})
	e.seedUpdate("u1", rollout.PhasePending)
	for _, step := range []struct{ action, audit, from, to string }{
		{apiv1.UpdateApprove, "approve update", rollout.PhasePending, rollout.PhaseApproved},
		{apiv1.UpdatePause, "pause update", rollout.PhaseApproved, rollout.PhasePaused},
		{apiv1.UpdateResume, "resume update", rollout.PhasePaused, rollout.PhaseApproved},
		{apiv1.UpdatePause, "pause update", rollout.PhaseApproved, rollout.PhasePaused},
		{apiv1.UpdateRollback, "roll back update", rollout.PhasePaused, rollout.PhaseRollingBack},
	} {
		code, body := e.callAs("olga", apiv1.RoleOperator, http.MethodPost, apiv1.UpdateActionPath("u1", step.action), "")
		if code != http.StatusOK {
			t.Fatalf("%s = %d %s", step.action, code, body)
		}
		var resp apiv1.UpdateActionResponse
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		u, idx := e.storedUpdate("u1")
		if resp.From != step.from || resp.Phase != step.to || u.Status.Phase != step.to || resp.Index != idx {
			t.Errorf("%s answered %+v, stored phase %s at %d; want %s → %s", step.action, resp, u.Status.Phase, idx, step.from, step.to)
		}
		a := e.lastAudit()
		if a.Action != step.audit || a.Object != "ClusterUpdate/u1" || a.Subject != "olga" || a.Result != http.StatusOK {
			t.Errorf("%s audited as %+v", step.action, a)
		}
	}
	u, _ := e.storedUpdate("u1")
	if !u.Spec.Approve {
		t.Error("approve did not set spec.approve")
	}
	if !strings.Contains(u.Status.Message, "olga") {
		t.Errorf("rollback message %q does not name who asked", u.Status.Message)
	}
}

// TestUpdateActionsRefuseWhatTheyMayNotDo: a transition the phase does
// not allow and a stale ?cas are conflicts that change nothing; a missing
// update is not found; a body is refused. Every refusal is audited.
func TestUpdateActionsRefuseWhatTheyMayNotDo(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{})
	idx := e.seedUpdate("u1", rollout.PhasePending)
	for name, tt := range map[string]struct {
		path, body string
		status     int
		code       string
	}{
		"resume a pending update": {apiv1.UpdateActionPath("u1", apiv1.UpdateResume), "", http.StatusConflict, apiv1.CodeConflict},
		"stale cas":               {apiv1.UpdateActionPath("u1", apiv1.UpdateApprove) + "?cas=1", "", http.StatusConflict, apiv1.CodeConflict},
		"bad cas":                 {apiv1.UpdateActionPath("u1", apiv1.UpdateApprove) + "?cas=x", "", http.StatusBadRequest, apiv1.CodeBadRequest},
		"missing update":          {apiv1.UpdateActionPath("nope", apiv1.UpdateApprove), "", http.StatusNotFound, apiv1.CodeNotFound},
		"a body":                  {apiv1.UpdateActionPath("u1", apiv1.UpdateApprove), `{"status":{"phase":"done"}}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"unknown action":          {apiv1.UpdateActionPath("u1", "delete"), "", http.StatusNotFound, apiv1.CodeNotFound},
	} {
		code, body := e.call(apiv1.RoleClusterAdmin, http.MethodPost, tt.path, tt.body)
		if code != tt.status || !strings.Contains(body, `"`+tt.code+`"`) {
			t.Errorf("%s: %d %s, want %d %s", name, code, body, tt.status, tt.code)
		}
		if a := e.lastAudit(); tt.status != http.StatusNotFound && (a.Result != tt.status || a.Code != tt.code) {
			t.Errorf("%s: last audit entry %+v", name, a)
		}
	}
	if u, now := e.storedUpdate("u1"); now != idx || u.Status.Phase != rollout.PhasePending {
		t.Errorf("refused actions changed the update: phase %s at %d, was pending at %d", u.Status.Phase, now, idx)
	}
	code, body := e.call(apiv1.RoleClusterAdmin, http.MethodPost, apiv1.UpdateActionPath("u1", apiv1.UpdateApprove)+"?cas="+strconv.FormatUint(idx, 10), "")
	if code != http.StatusOK {
		t.Fatalf("approve with the current cas = %d %s", code, body)
	}
}

// approveReplayed sends olga's approve at path again under the request
// headers id: it must be answered as first was, writing nothing (u1 stays
// at idx).
func (e *etcdRouteEnv) approveReplayed(path string, id map[string]string, first string, idx uint64) {
	e.t.Helper()
	code, again := e.serve("olga", apiv1.RoleOperator, http.MethodPost, path, "", id)
	var a, b apiv1.UpdateActionResponse
	_ = json.Unmarshal([]byte(first), &a)
	_ = json.Unmarshal([]byte(again), &b)
	if code != http.StatusOK || b.Index != a.Index || b.Phase != rollout.PhaseApproved {
		e.t.Fatalf("retry = %d %s, want the first answer %s", code, again, first)
	}
	if _, now := e.storedUpdate("u1"); now != idx {
		e.t.Errorf("the retry wrote the update again (%d → %d)", idx, now)
	}
}

// TestUpdateActionAppliedOnce: a retry of an action with the same request
// id, after the first attempt landed, answers as the first did (replayed)
// instead of failing on the phase the first attempt made, and applies and
// audits nothing again; the id used for another update is refused.
func TestUpdateActionAppliedOnce(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{})
	e.seedUpdate("u1", rollout.PhasePending)
	e.seedUpdate("u2", rollout.PhasePending)
	id := map[string]string{apiv1.HeaderRequestID: "approve-u1-0123456789"}
	path := apiv1.UpdateActionPath("u1", apiv1.UpdateApprove)
	code, first := e.serve("olga", apiv1.RoleOperator, http.MethodPost, path, "", id)
	if code != http.StatusOK {
		t.Fatalf("approve = %d %s", code, first)
	}
	_, idx := e.storedUpdate("u1")
	audits := len(e.be.st.List(apiv1.KindAudit))
	e.approveReplayed(path, id, first, idx)
	if n := len(e.be.st.List(apiv1.KindAudit)); n != audits {
		t.Errorf("the retry added %d audit entries", n-audits)
	}
	code, body := e.serve("olga", apiv1.RoleOperator, http.MethodPost, apiv1.UpdateActionPath("u2", apiv1.UpdateApprove), "", id)
	if code != http.StatusBadRequest {
		t.Errorf("the id reused for another update = %d %s, want 400", code, body)
	}
	if u, _ := e.storedUpdate("u2"); u.Status.Phase != rollout.PhasePending {
		t.Errorf("the reused id approved u2: %s", u.Status.Phase)
	}
}

// TestRawWritesOfPlannedKindsRefusedForEveryRole: PUT and DELETE of
// /v1/objects for KubernetesCluster (and its aliases) and ClusterUpdate
// are refused with plan-required for every role, cluster-admin included,
// naming the command to use, audited, and store nothing.
func TestRawWritesOfPlannedKindsRefusedForEveryRole(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	e.seedUpdate("u1", rollout.PhasePending)
	before := e.be.st.KindIndex(api.KindKubernetesCluster) + e.be.st.KindIndex(api.KindClusterUpdate)
	cluster := `{"kind":"KubernetesCluster","metadata":{"name":"lab"},"spec":{}}`
	update := `{"kind":"ClusterUpdate","metadata":{"name":"u1"},"spec":{"version":"0.5.0","allNodes":true}}`
	for _, role := range Roles() {
		for _, tt := range []struct{ method, kind, name, body, use string }{
			{http.MethodPut, api.KindKubernetesCluster, "lab", cluster, "kctl kubernetes apply -f"},
			{http.MethodPut, "kubernetes-cluster", "lab", cluster, "kctl kubernetes apply -f"},
			{http.MethodDelete, api.KindKubernetesCluster, "lab", "", "kctl kubernetes delete lab"},
			{http.MethodDelete, "kubernetes_cluster", "lab", "", "kctl kubernetes delete lab"},
			{http.MethodPut, api.KindClusterUpdate, "u1", update, "kctl apply -f"},
			{http.MethodDelete, api.KindClusterUpdate, "u1", "", "kctl update pause u1"},
		} {
			code, body := e.call(role, tt.method, apiv1.ObjectPath(tt.kind, tt.name), tt.body)
			if code != http.StatusMethodNotAllowed || !strings.Contains(body, apiv1.CodePlanRequired) || !strings.Contains(body, tt.use) {
				t.Errorf("%s %s %s/%s = %d %s, want 405 %s naming %q", role, tt.method, tt.kind, tt.name, code, body, apiv1.CodePlanRequired, tt.use)
			}
			if a := e.lastAudit(); a.Role != role || a.Method != tt.method || a.Result != http.StatusMethodNotAllowed || a.Code != apiv1.CodePlanRequired {
				t.Errorf("%s %s %s: audited as %+v", role, tt.method, tt.kind, a)
			}
		}
	}
	if after := e.be.st.KindIndex(api.KindKubernetesCluster) + e.be.st.KindIndex(api.KindClusterUpdate); after != before {
		t.Errorf("refused writes changed clusters or updates (%d → %d)", before, after)
	}
}

// TestUpdateActionAfterConcurrentWrites: a write to the update that commits
// between the route's read and its put (the roller's progress) makes the
// route read again and transition the new version, the other write kept;
// it answers 409 only when every one of its casAttempts attempts lost. A
// retry of the whole call under the same request id, after a later attempt
// landed, is answered as that attempt was and applies nothing again.
func TestUpdateActionAfterConcurrentWrites(t *testing.T) {
	for _, tc := range []struct {
		name      string
		interpose int
		want      int
	}{
		{"one write in between", 1, http.StatusOK},
		{"two writes in between", casAttempts - 1, http.StatusOK},
		{"a write before every attempt", casAttempts, http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEtcdRouteEnv(t, api.ClusterStatus{})
			e.seedUpdate("u1", rollout.PhasePending)
			u, _ := e.storedUpdate("u1")
			u.Status.Message = "roller progress"
			data, _ := json.Marshal(u)
			e.be.interposed, _ = store.Put{Kind: api.KindClusterUpdate, Name: "u1", Data: data}.Command()
			e.be.interpose = tc.interpose
			id := map[string]string{apiv1.HeaderRequestID: "approve-u1-race-0001"}
			path := apiv1.UpdateActionPath("u1", apiv1.UpdateApprove)
			code, first := e.serve("olga", apiv1.RoleOperator, http.MethodPost, path, "", id)
			if code != tc.want {
				t.Fatalf("approve = %d %s, want %d", code, first, tc.want)
			}
			got, idx := e.storedUpdate("u1")
			if got.Status.Message != "roller progress" && tc.want == http.StatusOK {
				t.Errorf("the concurrent write was lost: message %q", got.Status.Message)
			}
			if approved := got.Status.Phase == rollout.PhaseApproved; approved != (tc.want == http.StatusOK) {
				t.Fatalf("phase %s after %d", got.Status.Phase, code)
			}
			if tc.want != http.StatusOK {
				return
			}
			e.approveReplayed(path, id, first, idx)
		})
	}
}
