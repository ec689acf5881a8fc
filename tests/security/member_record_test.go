package security

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/server"
	"kcore.dev/kcore/pkg/version"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// recordRoute is the route a replica records its own Member object on.
const recordRoute = "PUT /v1/members/{id}"

// ownRecord is replica r's Member record as it would send it, with schema.
func ownRecord(r *harness.Replica, schema int) apiv1.RecordMemberRequest {
	return apiv1.RecordMemberRequest{RaftAddr: r.Addr, HTTPAddr: apiserve.Of(r).Addr, Schema: schema}
}

// memberOf is the Member record the leader holds for id.
func (e *env) memberOf(id string) (apiv1.MemberData, bool) {
	e.t.Helper()
	var m apiv1.MemberData
	o, ok := e.c.WaitLeader().Node().State().Get(apiv1.KindMember, id)
	if !ok {
		return m, false
	}
	if err := json.Unmarshal(o.Data, &m); err != nil {
		e.t.Fatal(err)
	}
	return m, true
}

// controllerWithHosts is a client with a controller certificate named cn,
// issued for ips.
func (e *env) controllerWithHosts(cn string, ips ...string) *http.Client {
	e.t.Helper()
	req := pki.CertRequest{CommonName: cn, Organization: []string{apiv1.RoleController}, Usage: pki.UsageClient | pki.UsageServer, Validity: time.Hour}
	for _, ip := range ips {
		req.IPs = append(req.IPs, net.ParseIP(ip))
	}
	kp, err := e.ca.Issue(req, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return e.clientFor(kp)
}

// TestRecordMemberRouteRoles: only the replica itself records its Member
// object with PUT /v1/members/{id}, directly on the leader or through a
// follower, and every refusal is audited.
func TestRecordMemberRouteRoles(t *testing.T) {
	e := newEnv(t, 3)
	n1 := e.joined(e.newToken(apiv1.TokenRequest{NodeID: "n1"}).Token, "n1")
	clients := e.roleClients(n1)
	l, f := e.c.WaitLeader(), e.c.Replica(0)
	if f == l {
		f = e.c.Replica(1)
	}
	tests := []struct {
		name   string
		client *http.Client
		status int
		code   string
	}{
		{"viewer", clients["viewer"], http.StatusForbidden, apiv1.CodeForbidden},
		{"operator", clients["operator"], http.StatusForbidden, apiv1.CodeForbidden},
		{"cluster-admin", clients["cluster-admin"], http.StatusForbidden, apiv1.CodeForbidden},
		{"node", clients["node"], http.StatusForbidden, apiv1.CodeForbidden},
		{"controller of another id", clients["controller"], http.StatusForbidden, apiv1.CodeForbidden},
		{"anonymous", clients["anonymous"], http.StatusUnauthorized, apiv1.CodeUnauthenticated},
		{"controller of its own id", e.client(apiv1.RoleController, f.ID), http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, via := range []*harness.Replica{l, f} {
				schema := version.Schema - 1
				if via == f {
					schema = version.Schema
				}
				r := e.call(tt.client, apiserve.Of(via), http.MethodPut, apiv1.MemberPath(f.ID), ownRecord(f, schema))
				want(t, r, tt.status, tt.code)
				m, _ := e.memberOf(f.ID)
				if tt.status == http.StatusOK && m.Schema != schema {
					t.Fatalf("recorded %+v through %s, want schema %d", m, via.ID, schema)
				}
				if tt.status != http.StatusOK && m.Schema != version.Schema {
					t.Fatalf("a refused call changed the record to %+v", m)
				}
			}
		})
	}
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Route == recordRoute && a.Subject == f.ID && a.Result == http.StatusOK && a.Object == apiv1.KindMember+"/"+f.ID
	})
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Route == recordRoute && a.Subject == "r9" && a.Result == http.StatusForbidden
	})
}

// TestRecordMemberRefusals: the leader records only a server of the raft
// configuration at its configured raft address, with a schema and body
// within their bounds, and never adds a voter.
func TestRecordMemberRefusals(t *testing.T) {
	e := newEnv(t, 1)
	r0 := e.c.WaitLeader()
	self := e.client(apiv1.RoleController, r0.ID)
	put := func(id string, body any) response {
		return e.call(self, e.leader(), http.MethodPut, apiv1.MemberPath(id), body)
	}

	stranger := e.client(apiv1.RoleController, "r7")
	r := e.call(stranger, e.leader(), http.MethodPut, apiv1.MemberPath("r7"), ownRecord(r0, version.Schema))
	want(t, r, http.StatusNotFound, apiv1.CodeNotFound)
	if !strings.Contains(r.errorBody(t).Message, "not in the raft configuration") {
		t.Fatalf("unknown id: %s", r.body)
	}
	moved := ownRecord(r0, version.Schema)
	moved.RaftAddr = "127.0.0.1:1"
	want(t, put(r0.ID, moved), http.StatusConflict, apiv1.CodeConflict)
	if m, _ := e.memberOf(r0.ID); m.RaftAddr != r0.Addr {
		t.Fatalf("a refused record moved r0 to %+v", m)
	}

	for _, tt := range []struct {
		schema int
		status int
	}{
		{server.MinMemberSchema - 1, http.StatusBadRequest},
		{server.MinMemberSchema, http.StatusOK},
		{server.MaxMemberSchema, http.StatusOK},
		{server.MaxMemberSchema + 1, http.StatusBadRequest},
		{version.Schema, http.StatusOK},
	} {
		r := put(r0.ID, ownRecord(r0, tt.schema))
		if r.status != tt.status {
			t.Fatalf("schema %d: status %d, want %d: %s", tt.schema, r.status, tt.status, r.body)
		}
		if m, _ := e.memberOf(r0.ID); tt.status == http.StatusOK && m.Schema != tt.schema {
			t.Fatalf("schema %d: recorded %+v", tt.schema, m)
		}
	}

	noPort := ownRecord(r0, version.Schema)
	noPort.HTTPAddr = "127.0.0.1"
	want(t, put(r0.ID, noPort), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, put(r0.ID, `{"raftAddr":"`+r0.Addr+`","httpAddr":"127.0.0.1:1","schema":3,"id":"r1"}`), http.StatusBadRequest, apiv1.CodeBadRequest)
	want(t, put(r0.ID, ""), http.StatusBadRequest, apiv1.CodeBadRequest)

	// The body limit, at the bound: padding after the JSON value counts.
	b, err := json.Marshal(ownRecord(r0, version.Schema))
	if err != nil {
		t.Fatal(err)
	}
	atLimit := string(b) + strings.Repeat(" ", server.MaxMemberBody-len(b))
	want(t, put(r0.ID, atLimit), http.StatusOK, "")
	want(t, put(r0.ID, atLimit+" "), http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge)

	r = e.call(e.client(apiv1.RoleViewer, "victor"), e.leader(), http.MethodGet, apiv1.PathMembers, nil)
	want(t, r, http.StatusOK, "")
	var ms []apiv1.Member
	r.decode(t, &ms)
	if len(ms) != 1 || ms[0].ID != r0.ID {
		t.Fatalf("recording changed the raft configuration: %+v", ms)
	}
}

// TestRecordMemberByCertificateHost: a replica whose id is not its
// certificate's name (the default: its advertise address) records itself
// when it calls the leader directly with a certificate issued for the host
// of its configured raft address; a certificate for another host is
// refused, and so is the same call forwarded by a follower, which passes on
// only the caller's name.
func TestRecordMemberByCertificateHost(t *testing.T) {
	e := newEnv(t, 3)
	l := e.c.WaitLeader()
	var f *harness.Replica
	for _, r := range e.c.Running() {
		if r != l {
			f = r
			break
		}
	}
	sameHost := e.controllerWithHosts("controller-1", "127.0.0.1")
	otherHost := e.controllerWithHosts("controller-1", "10.0.0.9")

	want(t, e.call(otherHost, apiserve.Of(l), http.MethodPut, apiv1.MemberPath(f.ID), ownRecord(f, version.Schema-1)), http.StatusForbidden, apiv1.CodeForbidden)
	want(t, e.call(sameHost, apiserve.Of(f), http.MethodPut, apiv1.MemberPath(f.ID), ownRecord(f, version.Schema-1)), http.StatusForbidden, apiv1.CodeForbidden)
	if m, _ := e.memberOf(f.ID); m.Schema != version.Schema {
		t.Fatalf("a refused call changed the record to %+v", m)
	}
	want(t, e.call(sameHost, apiserve.Of(l), http.MethodPut, apiv1.MemberPath(f.ID), ownRecord(f, version.Schema-1)), http.StatusOK, "")
	if m, _ := e.memberOf(f.ID); m.Schema != version.Schema-1 {
		t.Fatalf("recorded %+v, want schema %d", m, version.Schema-1)
	}
}
