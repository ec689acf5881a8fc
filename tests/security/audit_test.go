package security

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func TestAuditLog(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	viewer := e.client(apiv1.RoleViewer, "victor")
	node := e.client(apiv1.RoleNode, "n1")
	want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1")), http.StatusOK, "")
	want(t, e.call(viewer, l, http.MethodDelete, apiv1.ObjectPath(probeKind, "c1"), nil), http.StatusForbidden, apiv1.CodeForbidden)
	want(t, e.call(node, l, http.MethodPost, apiv1.NodePath("n1", "heartbeat"), struct{}{}), http.StatusOK, "")
	want(t, e.call(viewer, l, http.MethodGet, apiv1.ObjectPath(probeKind, "c1"), nil), http.StatusOK, "")
	want(t, e.call(node, l, http.MethodPut, apiv1.NodePath("n1", "facts"), api.NodeFacts{Hostname: "n1"}), http.StatusOK, "")
	// Unchanged facts are not written or audited again.
	want(t, e.call(node, l, http.MethodPut, apiv1.NodePath("n1", "facts"), api.NodeFacts{Hostname: "n1"}), http.StatusOK, "")

	e.findAudit(func(a apiv1.AuditEntry) bool { return a.Subject == "victor" })
	entries := e.audit()
	type key struct {
		subject, role, method, object string
		result                        int
	}
	got := map[key]int{}
	for _, a := range entries {
		if a.Time == "" || a.ID == "" || a.Route == "" {
			t.Fatalf("incomplete audit entry %+v", a)
		}
		if _, err := time.Parse(time.RFC3339Nano, a.Time); err != nil {
			t.Fatalf("audit time %q: %v", a.Time, err)
		}
		got[key{a.Subject, a.Role, a.Method, a.Object, a.Result}]++
	}
	wantEntries := map[key]int{
		{"alice", apiv1.RoleClusterAdmin, http.MethodPut, "Probe/c1", 200}: 1,
		{"victor", apiv1.RoleViewer, http.MethodDelete, "Probe/c1", 403}:   1,
		{"n1", apiv1.RoleNode, http.MethodPut, "Node/n1", 200}:             1,
		{"victor", apiv1.RoleViewer, http.MethodGet, "Probe/c1", 200}:      0,
		{"n1", apiv1.RoleNode, http.MethodPost, "Node/n1", 200}:            0,
	}
	for k, n := range wantEntries {
		if got[k] != n {
			t.Errorf("audit entries for %+v: %d, want %d (all: %+v)", k, got[k], n, entries)
		}
	}

	// Filters: object and since.
	q := url.Values{apiv1.ParamObject: {"Probe/c1"}}
	r := e.call(viewer, l, http.MethodGet, apiv1.PathAudit+"?"+q.Encode(), nil)
	want(t, r, http.StatusOK, "")
	var filtered []apiv1.AuditEntry
	r.decode(t, &filtered)
	if len(filtered) != 2 {
		t.Fatalf("object filter: %d entries, want 2: %+v", len(filtered), filtered)
	}
	q = url.Values{apiv1.ParamSince: {e.clock.Now().Add(time.Hour).Format(time.RFC3339)}}
	r = e.call(viewer, l, http.MethodGet, apiv1.PathAudit+"?"+q.Encode(), nil)
	want(t, r, http.StatusOK, "")
	r.decode(t, &filtered)
	if len(filtered) != 0 {
		t.Fatalf("since filter in the future: %d entries, want 0", len(filtered))
	}
	if _, ok := l.Server.LastSeen("n1"); !ok {
		t.Fatal("heartbeat not recorded")
	}
}
