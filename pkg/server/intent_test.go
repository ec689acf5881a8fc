package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// lastAction is the action of the newest audit entry.
func (e *etcdRouteEnv) lastAction() string {
	items := e.be.st.List(apiv1.KindAudit)
	if len(items) == 0 {
		return ""
	}
	var a apiv1.AuditEntry
	_ = json.Unmarshal(items[len(items)-1].Data, &a)
	return a.Action
}

func TestAuditRecordsActionAndDeclaredIntent(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	u := `{"kind":"ClusterUpdate","metadata":{"name":"u1"},"spec":{"version":"0.5.0","allNodes":true}}`
	path := apiv1.ObjectPath(api.KindClusterUpdate, "u1")
	if code, body := e.call(apiv1.RoleOperator, http.MethodPut, path, u); code != http.StatusOK {
		t.Fatalf("put = %d %s", code, body)
	}
	if got := e.lastAction(); got != "put" {
		t.Errorf("plain write recorded action %q, want put", got)
	}
	for _, intent := range apiv1.UpdateIntents() {
		if code, body := e.serve("alice", apiv1.RoleOperator, http.MethodPut, path, u, map[string]string{apiv1.HeaderIntent: intent}); code != http.StatusOK {
			t.Fatalf("put with intent %s = %d %s", intent, code, body)
		}
		if got := e.lastAction(); got != intent {
			t.Errorf("write declaring %s recorded action %q", intent, got)
		}
	}
	for name, tt := range map[string]struct{ path, body, intent string }{
		"unknown intent":         {path, u, "delete-everything"},
		"intent on a cluster":    {apiv1.ObjectPath(api.KindKubernetesCluster, "lab"), `{}`, "approve"},
		"intent with a newline":  {path, u, "approve\nx"},
		"intent that is a route": {path, u, "apply"},
	} {
		if code, _ := e.serve("alice", apiv1.RoleClusterAdmin, http.MethodPut, tt.path, tt.body, map[string]string{apiv1.HeaderIntent: tt.intent}); code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", name, code)
		}
	}
}

// TestEveryRouteNamesItsAction: kctl audit shows actions by name, so no
// route may leave it empty.
func TestEveryRouteNamesItsAction(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{})
	seen := map[string]string{}
	for _, rt := range e.s.routes(nil) {
		if rt.action == "" {
			t.Errorf("route %s has no action", rt.pattern)
		}
		if other, ok := seen[rt.action]; ok {
			t.Errorf("routes %s and %s share the action %q", other, rt.pattern, rt.action)
		}
		seen[rt.action] = rt.pattern
	}
}
