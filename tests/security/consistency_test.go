package security

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"

	"kcore.dev/kcore/tests/apiserve"
)

func TestFollowerForwardsToLeader(t *testing.T) {
	e := newEnv(t, 3)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	f := e.follower()
	r := e.call(admin, f, http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1"))
	want(t, r, http.StatusOK, "")
	var w apiv1.WriteResponse
	r.decode(t, &w)
	o, ok := e.c.WaitLeader().Node().State().Get(probeKind, "c1")
	if !ok || o.ModifyIndex != w.Index {
		t.Fatalf("leader has c1 = %+v, %v; want it at index %d", o, ok, w.Index)
	}
	// The audit entry names the original caller, not the forwarding replica.
	a := e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Object == probeKind+"/c1" && a.Method == http.MethodPut
	})
	if a.Subject != "alice" || a.Role != apiv1.RoleClusterAdmin || a.Result != http.StatusOK {
		t.Fatalf("audit entry %+v: want alice, cluster-admin, 200", a)
	}
	// A forwarded refusal is still a refusal.
	viewer := e.client(apiv1.RoleViewer, "victor")
	want(t, e.call(viewer, f, http.MethodPut, apiv1.ObjectPath(probeKind, "c2"), probeJSON("c2")), http.StatusForbidden, apiv1.CodeForbidden)
	// A default read on a follower is leader-confirmed and sees the write.
	r = e.call(viewer, f, http.MethodGet, apiv1.ObjectPath(probeKind, "c1"), nil)
	want(t, r, http.StatusOK, "")
	if r.header.Get(apiv1.HeaderIndex) != strconv.FormatUint(w.Index, 10) {
		t.Fatalf("index header %q, want %d", r.header.Get(apiv1.HeaderIndex), w.Index)
	}
	// A forged forwarding header from a non-controller is ignored.
	req, _ := http.NewRequest(http.MethodPut, "https://"+e.leader().Addr+apiv1.ObjectPath(probeKind, "c3"), nil)
	req.Header.Set(apiv1.HeaderForwarded, "r1")
	req.Header.Set("X-Kcore-Forwarded-Role", apiv1.RoleClusterAdmin)
	resp, err := viewer.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("forged forwarding header: status %d, want 403", resp.StatusCode)
	}
}

func TestStaleReadIsLocal(t *testing.T) {
	e := newEnv(t, 3)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	viewer := e.client(apiv1.RoleViewer, "victor")
	want(t, e.call(admin, e.leader(), http.MethodPut, apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1")), http.StatusOK, "")
	e.c.WaitCaughtUp()
	// Stop every replica but one follower: no quorum, no leader.
	survivor := e.c.Running()[0]
	if survivor == e.c.WaitLeader() {
		survivor = e.c.Running()[1]
	}
	for _, r := range e.c.Running() {
		if r != survivor {
			e.c.Stop(r.Index)
		}
	}
	a := apiserve.Of(survivor)
	path := apiv1.ObjectPath(probeKind, "c1")
	r := e.call(viewer, a, http.MethodGet, path+"?stale=true", nil)
	want(t, r, http.StatusOK, "")
	var o apiv1.Object
	r.decode(t, &o)
	if o.Name != "c1" {
		t.Fatalf("stale read %+v, want c1", o)
	}
	e.c.Eventually(30e9, func() error {
		r := e.call(viewer, a, http.MethodGet, path, nil)
		if r.status != http.StatusServiceUnavailable {
			return fmt.Errorf("default read without a leader: status %d, want 503", r.status)
		}
		return nil
	})
	want(t, e.call(admin, a, http.MethodPut, path, probeJSON("c1")), http.StatusServiceUnavailable, apiv1.CodeNoLeader)
}
