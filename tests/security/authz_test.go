package security

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func TestRoles(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	viewer := e.client(apiv1.RoleViewer, "victor")
	operator := e.client(apiv1.RoleOperator, "olga")
	node1 := e.client(apiv1.RoleNode, "n1")
	e.seedCluster("c1")
	want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(probeKind, "p1"), probeJSON("p1")), http.StatusOK, "")

	tests := []struct {
		name   string
		client *http.Client
		method string
		path   string
		body   any
		status int
	}{
		{"viewer reads a cluster", viewer, http.MethodGet, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), nil, http.StatusOK},
		{"viewer lists clusters", viewer, http.MethodGet, apiv1.ObjectPath(api.KindKubernetesCluster, ""), nil, http.StatusOK},
		{"viewer writes an object", viewer, http.MethodPut, apiv1.ObjectPath(probeKind, "p2"), probeJSON("p2"), http.StatusForbidden},
		{"viewer deletes an object", viewer, http.MethodDelete, apiv1.ObjectPath(probeKind, "p1"), nil, http.StatusForbidden},
		{"operator writes an object", operator, http.MethodPut, apiv1.ObjectPath(probeKind, "p2"), probeJSON("p2"), http.StatusForbidden},
		{"operator applies a cluster", operator, http.MethodPost, "/v1/apply", apiv1.ApplyRequest{Request: apiv1.PlanRequest{Delete: []string{"c1"}}}, http.StatusForbidden},
		{"viewer creates a token", viewer, http.MethodPost, apiv1.PathTokens, apiv1.TokenRequest{}, http.StatusForbidden},
		{"operator issues a certificate", operator, http.MethodPost, apiv1.PathCerts, apiv1.CertRequest{Role: apiv1.RoleClusterAdmin, Name: "olga2"}, http.StatusForbidden},
		{"viewer takes a snapshot", viewer, http.MethodGet, apiv1.PathSnapshot, nil, http.StatusForbidden},
		{"node reads a cluster", node1, http.MethodGet, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), nil, http.StatusForbidden},
		{"node reads its own state", node1, http.MethodGet, apiv1.NodePath("n1", "state"), nil, http.StatusOK},
		{"node reads another node's state", node1, http.MethodGet, apiv1.NodePath("n2", "state"), nil, http.StatusForbidden},
		{"node writes its own facts", node1, http.MethodPut, apiv1.NodePath("n1", "facts"), api.NodeFacts{Hostname: "n1"}, http.StatusOK},
		{"node writes another node's facts", node1, http.MethodPut, apiv1.NodePath("n2", "facts"), api.NodeFacts{Hostname: "n2"}, http.StatusForbidden},
		{"node heartbeats for another node", node1, http.MethodPost, apiv1.NodePath("n2", "heartbeat"), struct{}{}, http.StatusForbidden},
		{"node adds a member", node1, http.MethodPost, apiv1.PathMembers, apiv1.AddMemberRequest{ID: "x", RaftAddr: "127.0.0.1:1", HTTPAddr: "127.0.0.1:2"}, http.StatusForbidden},
		{"viewer removes a member", viewer, http.MethodDelete, apiv1.PathMembers + "/r0", nil, http.StatusForbidden},
		{"viewer reads health", viewer, http.MethodGet, apiv1.PathHealth, nil, http.StatusOK},
		{"node reads metrics", node1, http.MethodGet, apiv1.PathMetrics, nil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.call(tt.client, l, tt.method, tt.path, tt.body)
			code := ""
			if tt.status == http.StatusForbidden {
				code = apiv1.CodeForbidden
			}
			want(t, r, tt.status, code)
		})
	}
	st := e.c.WaitLeader().Node().State()
	if _, ok := st.Get(probeKind, "p2"); ok {
		t.Fatal("a refused write stored p2")
	}
	if _, ok := st.Get(api.KindNode, "n2"); ok {
		t.Fatal("n1 wrote n2's facts")
	}
	if _, ok := st.Get(probeKind, "p1"); !ok {
		t.Fatal("a refused delete removed p1")
	}
	if _, ok := st.Get(api.KindKubernetesCluster, "c1"); !ok {
		t.Fatal("a refused apply removed c1")
	}

	// Both headline refusals are audited with who, what, when and result.
	viewerPut := e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "victor" && a.Method == http.MethodPut && a.Object == probeKind+"/p2"
	})
	nodeRead := e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "n1" && a.Method == http.MethodGet && a.Object == "Node/n2"
	})
	for _, a := range []apiv1.AuditEntry{viewerPut, nodeRead} {
		if a.Result != http.StatusForbidden || a.Code != apiv1.CodeForbidden || a.Time == "" || a.Role == "" || !strings.HasPrefix(a.Route, a.Method+" /") {
			t.Fatalf("audit entry %+v: want result 403, code, time, role and route", a)
		}
	}
}

// TestOperatorAppliesAndSteersUpdates: an operator stores a ClusterUpdate
// through plan and apply and steers it through the update routes; a stale
// ?cas is a conflict, and each call is audited by its action's name.
func TestOperatorAppliesAndSteersUpdates(t *testing.T) {
	e := newEnv(t, 1)
	operator := e.client(apiv1.RoleOperator, "olga")
	e.planApply(operator, apiv1.PlanRequest{Updates: []api.ClusterUpdate{update("u1")}})
	o, ok := e.c.WaitLeader().Node().State().Get(api.KindClusterUpdate, "u1")
	if !ok {
		t.Fatal("apply did not store u1")
	}
	stale := fmt.Sprintf("?cas=%d", o.ModifyIndex-1)
	want(t, e.call(operator, e.leader(), http.MethodPost, apiv1.UpdateActionPath("u1", apiv1.UpdateApprove)+stale, nil), http.StatusConflict, apiv1.CodeConflict)
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "olga" && a.Result == http.StatusConflict && a.Action == "approve update"
	})
	r := e.call(operator, e.leader(), http.MethodPost, apiv1.UpdateActionPath("u1", apiv1.UpdateApprove)+fmt.Sprintf("?cas=%d", o.ModifyIndex), nil)
	want(t, r, http.StatusOK, "")
	var resp apiv1.UpdateActionResponse
	r.decode(t, &resp)
	if resp.From != "pending" || resp.Phase != "approved" {
		t.Fatalf("approve answered %+v, want pending → approved", resp)
	}
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "olga" && a.Result == http.StatusOK && a.Action == "approve update" && a.Object == "ClusterUpdate/u1"
	})
}
