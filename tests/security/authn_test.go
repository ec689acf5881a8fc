package security

import (
	"net/http"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

func TestAuthentication(t *testing.T) {
	e := newEnv(t, 1)
	leader := e.leader()
	other, err := pki.NewCA("other", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Issue(pki.CertRequest{CommonName: "mallory", Organization: []string{apiv1.RoleClusterAdmin}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		client *http.Client
		// status 0 means the TLS handshake must fail; -1 that it fails or
		// the request is answered 401.
		status int
		code   string
	}{
		{"no client certificate", e.clientFor(pki.KeyPair{}), http.StatusUnauthorized, apiv1.CodeUnauthenticated},
		{"certificate from another CA", e.clientFor(foreign), -1, ""},
		{"certificate from another CA, forced", e.clientWith(foreign, true), 0, ""},
		{"unknown role", e.client("superuser", "eve"), http.StatusForbidden, apiv1.CodeForbidden},
		{"cluster-admin", e.client(apiv1.RoleClusterAdmin, "alice"), http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := do(tt.client, http.MethodPut, "https://"+leader.Addr+apiv1.ObjectPath(probeKind, "c1"), probeJSON("c1"))
			if tt.status == -1 {
				if err == nil && r.status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401 or a refused handshake", r.status)
				}
				return
			}
			if tt.status == 0 {
				if err == nil {
					t.Fatalf("request succeeded with status %d, want a refused handshake", r.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want(t, r, tt.status, tt.code)
		})
	}
	// Unauthenticated requests changed nothing; only alice's write exists.
	o, ok := e.c.WaitLeader().Node().State().Get(probeKind, "c1")
	if !ok || o.CreateIndex != o.ModifyIndex {
		t.Fatalf("c1 = %+v, %v; want exactly one write", o, ok)
	}
	// The refused unknown role was audited, the anonymous one was not.
	e.findAudit(func(a apiv1.AuditEntry) bool { return a.Subject == "eve" && a.Result == http.StatusForbidden })
	for _, a := range e.audit() {
		if a.Subject == "" && a.Role == "" {
			t.Fatalf("anonymous request audited: %+v", a)
		}
	}
}

func TestNoRouteOutsideTable(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	for _, path := range []string{"/", "/v1", "/v1/objects", "/debug/pprof/", "/v2/health"} {
		r := e.call(admin, e.leader(), http.MethodGet, path, nil)
		want(t, r, http.StatusNotFound, apiv1.CodeNotFound)
	}
}
