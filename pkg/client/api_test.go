package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func TestErrorsMapToSentinels(t *testing.T) {
	p := newTestPKI(t)
	for _, tc := range []struct {
		code   string
		want   error
		status int
	}{
		{apiv1.CodeBadRequest, ErrBadRequest, 400},
		{apiv1.CodeUnauthenticated, ErrUnauthenticated, 401},
		{apiv1.CodeForbidden, ErrForbidden, 403},
		{apiv1.CodeNotFound, ErrNotFound, 404},
		{apiv1.CodeConflict, ErrConflict, 409},
		{apiv1.CodeQuorumLoss, ErrQuorumLoss, 409},
		{apiv1.CodeSchemaTooNew, ErrSchemaTooNew, 409},
		{apiv1.CodeTooLarge, ErrTooLarge, 413},
		{apiv1.CodePlanRequired, ErrPlanRequired, 405},
		{apiv1.CodeInternal, ErrInternal, 500},
	} {
		t.Run(tc.code, func(t *testing.T) {
			srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeError(w, tc.code, "refused for a reason", map[string]string{"why": "test"})
			}))
			c := p.client(t, addrOf(srv))
			_, err := c.Delete(context.Background(), "Probe", "lab", nil)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err %T is not an *APIError", err)
			}
			if apiErr.Status != tc.status || apiErr.Message != "refused for a reason" || apiErr.Details["why"] != "test" || apiErr.Addr != addrOf(srv) {
				t.Fatalf("APIError = %+v", apiErr)
			}
			if errors.Is(err, ErrNoLeader) {
				t.Fatal("matched an unrelated sentinel")
			}
		})
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	p := newTestPKI(t)
	srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "page not found", http.StatusNotFound)
	}))
	_, err := p.client(t, addrOf(srv)).Get(context.Background(), "Node", "n1")
	var apiErr *APIError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Message != "page not found" {
		t.Fatalf("err = %#v", err)
	}
}

func TestStrictDecoding(t *testing.T) {
	p := newTestPKI(t)
	for _, tc := range []struct {
		name, body string
	}{
		{"unknown field", `{"kind":"Node","name":"n1","createIndex":1,"modifyIndex":1,"data":{},"extra":1}`},
		{"trailing data", `{"kind":"Node","name":"n1"} {}`},
		{"not json", `hello`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := p.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, tc.body)
			}))
			if _, err := p.client(t, addrOf(srv)).Get(context.Background(), "Node", "n1"); err == nil {
				t.Fatal("decoded a bad response")
			}
		})
	}
}

// recorder answers every request with a canned body and records what it got.
type recorder struct {
	method, path, rawQuery, contentType string
	body                                []byte
	cert                                string
	answer                              any
	index                               string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.method, rec.path, rec.rawQuery = r.Method, r.URL.EscapedPath(), r.URL.RawQuery
	rec.contentType = r.Header.Get("Content-Type")
	rec.body, _ = io.ReadAll(r.Body)
	rec.cert = ""
	if len(r.TLS.PeerCertificates) > 0 {
		rec.cert = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	if rec.index != "" {
		w.Header().Set(apiv1.HeaderIndex, rec.index)
	}
	if b, ok := rec.answer.([]byte); ok {
		_, _ = w.Write(b)
		return
	}
	writeJSON(w, 200, rec.answer)
}

func TestRequestsOnTheWire(t *testing.T) {
	p := newTestPKI(t)
	rec := &recorder{}
	c := p.client(t, addrOf(p.serve(t, rec)))
	ctx := context.Background()
	cas := uint64(0)
	state, err := json.Marshal(api.NodeState{Cluster: "lab", NodeID: "n1", Generation: 3})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                           string
		answer                         any
		index                          string
		call                           func() (any, error)
		method, path, query, body, got string
	}{
		{
			name: "get blocking", answer: apiv1.Object{Kind: "NodeState", Name: "lab/n1", ModifyIndex: 12}, index: "12",
			call: func() (any, error) {
				o, idx, err := c.GetWith(ctx, "NodeState", "lab/n1", ReadOptions{Index: 11, Wait: 30 * time.Second, Stale: true})
				return []any{o.Name, idx}, err
			},
			method: "GET", path: "/v1/objects/NodeState/lab/n1", query: "index=11&stale=true&wait=30s", got: "[lab/n1 12]",
		},
		{
			name: "list", answer: apiv1.List{Index: 5, Items: []apiv1.Object{{Kind: "Node", Name: "a"}}},
			call: func() (any, error) {
				l, idx, err := c.ListWith(ctx, "Node", ReadOptions{})
				return []any{len(l.Items), idx}, err
			},
			method: "GET", path: "/v1/objects/Node", got: "[1 5]",
		},
		{
			name: "put cas", answer: apiv1.WriteResponse{Index: 20},
			call:   func() (any, error) { return c.Put(ctx, "Probe", "lab", map[string]int{"x": 1}, &cas) },
			method: "PUT", path: "/v1/objects/Probe/lab", query: "cas=0", body: `{"x":1}`, got: "20",
		},
		{
			name: "delete", answer: apiv1.WriteResponse{Index: 21},
			call:   func() (any, error) { return c.Delete(ctx, "Probe", "lab", nil) },
			method: "DELETE", path: "/v1/objects/Probe/lab", got: "21",
		},
		{
			name: "update action", answer: apiv1.UpdateActionResponse{Index: 22, From: "pending", Phase: "approved"},
			call: func() (any, error) {
				r, err := c.UpdateAction(ctx, "release-0-5-0", apiv1.UpdateApprove, &cas)
				return []any{r.Index, r.From, r.Phase}, err
			},
			method: "POST", path: "/v1/updates/release-0-5-0/approve", query: "cas=0", got: "[22 pending approved]",
		},
		{
			name: "node state", answer: apiv1.List{Index: 30, Items: []apiv1.Object{{Kind: api.KindNodeState, Name: "lab/n1", Data: state}}},
			call: func() (any, error) {
				s, idx, err := c.NodeState(ctx, "n1", 29, time.Minute)
				if err != nil {
					return nil, err
				}
				return []any{s[0].Cluster, s[0].Generation, idx}, nil
			},
			method: "GET", path: "/v1/nodes/n1/state", query: "index=29&wait=1m0s", got: "[lab 3 30]",
		},
		{
			name: "facts", answer: apiv1.WriteResponse{Index: 31},
			call:   func() (any, error) { return c.PutFacts(ctx, "n1", api.NodeFacts{Hostname: "h1"}) },
			method: "PUT", path: "/v1/nodes/n1/facts", body: `{"hostname":"h1"}`, got: "31",
		},
		{
			name: "heartbeat", answer: struct{}{},
			call:   func() (any, error) { return nil, c.Heartbeat(ctx, "n1") },
			method: "POST", path: "/v1/nodes/n1/heartbeat", body: `{}`, got: "<nil>",
		},
		{
			name: "report", answer: apiv1.WriteResponse{Index: 32},
			call:   func() (any, error) { return c.PutReport(ctx, "n1", api.NodeReport{NodeID: "n1", Cluster: "lab"}) },
			method: "PUT", path: "/v1/nodes/n1/report", body: `{"nodeId":"n1","cluster":"lab","observedGeneration":0}`, got: "32",
		},
		{
			name: "token", answer: apiv1.TokenResponse{Token: "tok", Expires: "2026-11-30T00:00:00Z"},
			call: func() (any, error) {
				r, err := c.CreateToken(ctx, "n1", time.Hour, true)
				return r.Token, err
			},
			method: "POST", path: "/v1/tokens", body: `{"nodeId":"n1","rekey":true,"ttl":"1h0m0s"}`, got: "tok",
		},
		{
			name: "revoke", answer: apiv1.RevokeResponse{Serial: "ab", Subject: "n1", Role: "node"},
			call: func() (any, error) {
				r, err := c.RevokeCert(ctx, "AB")
				return r.Serial + r.Subject, err
			},
			method: "POST", path: "/v1/revocations", body: `{"serial":"AB"}`, got: "abn1",
		},
		{
			name: "cert", answer: apiv1.CertResponse{Cert: "c", Key: "k", CA: "ca"},
			call: func() (any, error) {
				r, err := c.IssueCert(ctx, apiv1.RoleViewer, "alice")
				return r.Cert + r.Key + r.CA, err
			},
			method: "POST", path: "/v1/certs", body: `{"role":"viewer","name":"alice"}`, got: "ckca",
		},
		{
			name: "add member", answer: apiv1.WriteResponse{Index: 40},
			call: func() (any, error) {
				return nil, c.AddMember(ctx, apiv1.AddMemberRequest{ID: "c3", RaftAddr: "10.0.0.3:7000", HTTPAddr: "10.0.0.3:7443"})
			},
			method: "POST", path: "/v1/members", body: `{"id":"c3","raftAddr":"10.0.0.3:7000","httpAddr":"10.0.0.3:7443"}`, got: "<nil>",
		},
		{
			name: "remove member", answer: apiv1.WriteResponse{Index: 41},
			call:   func() (any, error) { return nil, c.RemoveMember(ctx, "c3") },
			method: "DELETE", path: "/v1/members/c3", got: "<nil>",
		},
		{
			name: "audit", answer: []apiv1.AuditEntry{{Time: "t", Subject: "admin", Result: 200}},
			call: func() (any, error) {
				es, err := c.Audit(ctx, AuditQuery{Since: since, Object: "KubernetesCluster/lab", Limit: 5})
				return len(es), err
			},
			method: "GET", path: "/v1/audit", query: "limit=5&object=KubernetesCluster%2Flab&since=2026-11-29T20%3A00%3A00Z", got: "1",
		},
		{
			name: "stale audit", answer: []apiv1.AuditEntry{{Time: "t", Subject: "admin", Result: 200}},
			call: func() (any, error) {
				es, err := c.Audit(ctx, AuditQuery{Object: "OnceItem", Stale: true})
				return len(es), err
			},
			method: "GET", path: "/v1/audit", query: "object=OnceItem&stale=true", got: "1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.answer, rec.index = tc.answer, tc.index
			got, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprint(got); s != tc.got {
				t.Errorf("result = %s, want %s", s, tc.got)
			}
			if rec.method != tc.method || rec.path != tc.path || rec.rawQuery != tc.query {
				t.Errorf("request = %s %s ? %s; want %s %s ? %s", rec.method, rec.path, rec.rawQuery, tc.method, tc.path, tc.query)
			}
			if strings.TrimSpace(string(rec.body)) != tc.body {
				t.Errorf("body = %s, want %s", rec.body, tc.body)
			}
			if tc.body != "" && rec.contentType != apiv1.ContentTypeJSON {
				t.Errorf("content type = %q", rec.contentType)
			}
			if rec.cert != "admin" {
				t.Errorf("client certificate CN = %q, want admin", rec.cert)
			}
		})
	}
}

func TestSnapshotStreams(t *testing.T) {
	p := newTestPKI(t)
	rec := &recorder{answer: []byte("raft-snapshot-bytes")}
	c := p.client(t, addrOf(p.serve(t, rec)))
	var buf bytes.Buffer
	n, err := c.SnapshotSave(context.Background(), &buf)
	if err != nil || n != int64(buf.Len()) || buf.String() != "raft-snapshot-bytes" {
		t.Fatalf("save = %d, %v, %q", n, err, buf.String())
	}
	rec.answer = apiv1.WriteResponse{Index: 1}
	if err := c.SnapshotRestore(context.Background(), strings.NewReader("raft-snapshot-bytes")); err != nil {
		t.Fatal(err)
	}
	if rec.method != "PUT" || rec.path != "/v1/snapshot" || string(rec.body) != "raft-snapshot-bytes" || rec.contentType != apiv1.ContentTypeSnapshot {
		t.Fatalf("restore sent %s %s %q (%s)", rec.method, rec.path, rec.body, rec.contentType)
	}
}

func TestJoinWithoutClientCertificate(t *testing.T) {
	p := newTestPKI(t)
	rec := &recorder{answer: apiv1.JoinResponse{Cert: string(p.admin.CertPEM), Key: string(p.admin.KeyPEM), CA: string(p.ca.CertPEM)}}
	srv := p.serve(t, rec)
	resp, err := Join(context.Background(), Config{Addresses: []string{addrOf(srv)}, CA: p.ca.CertPEM}, "tok", "n1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.CA != string(p.ca.CertPEM) || rec.cert != "" || rec.path != "/v1/join" || strings.TrimSpace(string(rec.body)) != `{"token":"tok","nodeId":"n1"}` {
		t.Fatalf("join: cert %q path %s body %s", rec.cert, rec.path, rec.body)
	}
	rec.answer = apiv1.JoinResponse{Cert: "garbage", Key: "garbage", CA: "x"}
	if _, err := Join(context.Background(), Config{Addresses: []string{addrOf(srv)}, CA: p.ca.CertPEM}, "tok", "n1"); err == nil {
		t.Fatal("join accepted an unusable certificate")
	}
	other := newTestPKI(t)
	if _, err := Join(context.Background(), Config{Addresses: []string{addrOf(srv)}, CA: other.ca.CertPEM}, "tok", "n1"); err == nil {
		t.Fatal("join trusted a controller from another CA")
	}
}

func TestNewRefuses(t *testing.T) {
	p := newTestPKI(t)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no cert", Config{Addresses: []string{"127.0.0.1:1"}, CA: p.ca.CertPEM}},
		{"no address", Config{CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.admin.KeyPEM}},
		{"http scheme", Config{Addresses: []string{"http://127.0.0.1:1"}, CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.admin.KeyPEM}},
		{"no port", Config{Addresses: []string{"127.0.0.1"}, CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.admin.KeyPEM}},
		{"bad ca", Config{Addresses: []string{"127.0.0.1:1"}, CA: []byte("x"), Cert: p.admin.CertPEM, Key: p.admin.KeyPEM}},
		{"mismatched key", Config{Addresses: []string{"127.0.0.1:1"}, CA: p.ca.CertPEM, Cert: p.admin.CertPEM, Key: p.server.KeyPEM}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil {
				t.Fatal("New accepted a bad config")
			}
		})
	}
	got, err := NormalizeAddresses([]string{"https://10.0.0.1:7443", "10.0.0.1:7443", "[::1]:7443", "https://ctl.lan:7443/"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "10.0.0.1:7443,[::1]:7443,ctl.lan:7443" {
		t.Fatalf("NormalizeAddresses = %v", got)
	}
}
