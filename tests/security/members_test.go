package security

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/version"
)

func TestMembersAndHealth(t *testing.T) {
	e := newEnv(t, 3)
	viewer := e.client(apiv1.RoleViewer, "victor")
	r := e.call(viewer, e.follower(), http.MethodGet, apiv1.PathMembers, nil)
	want(t, r, http.StatusOK, "")
	var ms []apiv1.Member
	r.decode(t, &ms)
	leaders := 0
	for _, m := range ms {
		if m.HTTPAddr == "" || m.RaftAddr == "" || m.Suffrage == "" {
			t.Fatalf("member %+v incomplete", m)
		}
		if m.Leader {
			leaders++
		}
	}
	if len(ms) != 3 || leaders != 1 {
		t.Fatalf("members %+v: want 3 with one leader", ms)
	}
	f := e.follower()
	r = e.call(viewer, f, http.MethodGet, apiv1.PathHealth, nil)
	want(t, r, http.StatusOK, "")
	var h apiv1.Health
	r.decode(t, &h)
	if h.Role != apiv1.StateFollower || h.LeaderAddr != e.leader().Addr || len(h.Peers) != 3 || h.AppliedIndex == 0 {
		t.Fatalf("follower health %+v", h)
	}
	r = e.call(viewer, e.leader(), http.MethodGet, apiv1.PathMetrics, nil)
	want(t, r, http.StatusOK, "")
	for _, m := range []string{`kcore_raft_state{state="leader"} 1`, "kcore_http_requests_total{", "kcore_raft_apply_duration_seconds", "kcore_raft_last_index"} {
		if !bytes.Contains(r.body, []byte(m)) {
			t.Fatalf("metrics lack %s:\n%s", m, r.body)
		}
	}
}

func TestRemoveLastVoterRefused(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	r := e.call(admin, e.leader(), http.MethodDelete, apiv1.PathMembers+"/"+e.c.WaitLeader().ID, nil)
	want(t, r, http.StatusConflict, apiv1.CodeQuorumLoss)
	want(t, e.call(admin, e.leader(), http.MethodDelete, apiv1.PathMembers+"/nobody", nil), http.StatusNotFound, apiv1.CodeNotFound)
	e.findAudit(func(a apiv1.AuditEntry) bool { return a.Code == apiv1.CodeQuorumLoss && a.Subject == "alice" })
}

func TestSnapshotRoutes(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1")), http.StatusOK, "")
	r := e.call(admin, l, http.MethodGet, apiv1.PathSnapshot, nil)
	want(t, r, http.StatusOK, "")
	snap := r.body
	want(t, e.call(admin, l, http.MethodDelete, apiv1.ObjectPath(probeKind, "c1"), nil), http.StatusOK, "")
	want(t, e.call(admin, l, http.MethodPut, apiv1.PathSnapshot, snap), http.StatusOK, "")
	if _, ok := e.c.WaitLeader().Node().State().Get(probeKind, "c1"); !ok {
		t.Fatal("restore did not bring c1 back")
	}
	newer := bytes.Replace(snap, []byte(fmt.Sprintf(`"schema":%d`, version.Schema)), []byte(`"schema":99`), 1)
	if bytes.Equal(newer, snap) {
		t.Fatal("snapshot header names no schema")
	}
	want(t, e.call(admin, l, http.MethodPut, apiv1.PathSnapshot, newer), http.StatusConflict, apiv1.CodeSchemaTooNew)
	want(t, e.call(admin, l, http.MethodPut, apiv1.PathSnapshot, "garbage"), http.StatusBadRequest, apiv1.CodeBadRequest)
}
