package security

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/store"
)

// TestAuditRetention checks that the leader's retention flags bound the
// audit log by entries and by age on every replica, and that the stored
// retention cannot be changed or removed through the API.
func TestAuditRetention(t *testing.T) {
	const (
		maxEntries = 3
		maxAge     = time.Hour
	)
	e := newEnvWith(t, 3, envOptions{tweak: func(cfg *server.Config) {
		cfg.AuditRetention = server.AuditRetention{MaxEntries: maxEntries, MaxAge: maxAge}
	}})
	l := e.leader()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	put := func(name string) {
		t.Helper()
		want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(probeKind, name), probeJSON(name)), http.StatusOK, "")
	}
	objects := func() []string {
		t.Helper()
		var out []string
		for _, a := range e.audit() {
			out = append(out, a.Object)
		}
		return out
	}
	for i := 1; i <= maxEntries; i++ {
		put("c" + strconv.Itoa(i))
	}
	if got := objects(); len(got) != maxEntries {
		t.Fatalf("at the bound: audit objects %v, want all %d", got, maxEntries)
	}
	put("c4")
	if got := objects(); len(got) != maxEntries || got[0] != "Probe/c2" {
		t.Fatalf("past the bound: audit objects %v, want c2..c4", got)
	}

	// Entries more than maxAge older than the newest stamp are dropped.
	e.clock.Advance(maxAge)
	put("c5")
	if got := objects(); len(got) != maxEntries {
		t.Fatalf("at the age bound: audit objects %v, want %d", got, maxEntries)
	}
	e.clock.Advance(time.Second)
	put("c6")
	if got := objects(); len(got) != 2 || got[0] != "Probe/c5" {
		t.Fatalf("past the age bound: audit objects %v, want c5, c6", got)
	}
	e.c.WaitCaughtUp()
	for _, r := range e.c.Running() {
		if n := r.Node().State().Count(apiv1.KindAudit); n != 2 {
			t.Fatalf("replica %s keeps %d audit entries, want 2", r.ID, n)
		}
		if _, ok := r.Node().State().Get(apiv1.KindAuditPolicy, store.AuditPolicyName); !ok {
			t.Fatalf("replica %s has no stored retention", r.ID)
		}
	}

	path := apiv1.ObjectPath(apiv1.KindAuditPolicy, store.AuditPolicyName)
	want(t, e.call(admin, l, http.MethodPut, path, `{"maxEntries":1}`), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, e.call(admin, l, http.MethodDelete, path, nil), http.StatusBadRequest, apiv1.CodeBadRequest)
}
