package gitops

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/tests/apiserve"
	"kcore.dev/kcore/tests/harness"
)

// httpClient is a raw HTTPS client with a certificate of role.
func (e *env) httpClient(role string) *http.Client {
	e.t.Helper()
	kp, err := e.ca.Issue(pki.CertRequest{CommonName: role + "-raw", Organization: []string{role}, Usage: pki.UsageClient, Validity: time.Hour}, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		e.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.ca.CertPEM)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}
	e.t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// do sends one request to the leader and returns its status and replay
// header; a 503 (no leader during an election) is sent again.
func (e *env) do(hc *http.Client, method, path string, body any, reqID string) (int, bool) {
	e.t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			e.t.Fatal(err)
		}
	}
	var status int
	var replayed bool
	err := harness.Poll(harness.DefaultTimeout, func() error {
		req, err := http.NewRequestWithContext(e.t.Context(), method, "https://"+apiserve.Of(e.c.WaitLeader()).Addr+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		if reqID != "" {
			req.Header.Set(apiv1.HeaderRequestID, reqID)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		status, replayed = resp.StatusCode, resp.Header.Get(apiv1.HeaderRequestReplayed) == "true"
		if status == http.StatusServiceUnavailable {
			return errors.New("no leader")
		}
		return nil
	})
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, replayed
}

// TestRouteRoles calls every GitSource route with every role: cluster-admin
// adds, approves and removes; operator also syncs; viewer and operator
// read; node and controller do nothing. Refusals are audited.
func TestRouteRoles(t *testing.T) {
	e := newEnv(t)
	r := newRepo(t)
	r.write("c/x.yaml", clusterYAML("x", "10.97.0.10", "10.245.0.0/16", 201))
	r.commit("x")
	spec := api.GitSourceSpec{Repo: r.dir, Branch: "main", Path: "c", Policy: api.GitPolicyApprove}
	admin := e.client(apiv1.RoleClusterAdmin)
	if _, err := admin.PutGitSource(t.Context(), "src", spec); err != nil {
		t.Fatal(err)
	}
	const ok, no = http.StatusOK, http.StatusForbidden
	routes := []struct {
		method, path string
		body         any
		want         map[string]int
	}{
		{http.MethodGet, apiv1.PathGitOps, nil, map[string]int{apiv1.RoleViewer: ok, apiv1.RoleOperator: ok, apiv1.RoleNode: no, apiv1.RoleController: no}},
		{http.MethodGet, apiv1.GitSourcePath("src"), nil, map[string]int{apiv1.RoleViewer: ok, apiv1.RoleOperator: ok, apiv1.RoleNode: no, apiv1.RoleController: no}},
		{http.MethodPut, apiv1.GitSourcePath("other"), spec, map[string]int{apiv1.RoleClusterAdmin: ok, apiv1.RoleViewer: no, apiv1.RoleOperator: no, apiv1.RoleNode: no, apiv1.RoleController: no}},
		{http.MethodPost, apiv1.GitSyncPath("src"), nil, map[string]int{apiv1.RoleClusterAdmin: ok, apiv1.RoleOperator: ok, apiv1.RoleViewer: no, apiv1.RoleNode: no, apiv1.RoleController: no}},
		{http.MethodPost, apiv1.GitApprovePath("src"), apiv1.GitApproveRequest{Commit: "0000000"}, map[string]int{apiv1.RoleViewer: no, apiv1.RoleOperator: no, apiv1.RoleNode: no, apiv1.RoleController: no}},
		{http.MethodDelete, apiv1.GitSourcePath("other"), nil, map[string]int{apiv1.RoleViewer: no, apiv1.RoleOperator: no, apiv1.RoleNode: no, apiv1.RoleController: no, apiv1.RoleClusterAdmin: ok}},
		{http.MethodPut, apiv1.ObjectPath(api.KindGitSource, "raw"), spec, map[string]int{apiv1.RoleClusterAdmin: http.StatusBadRequest}},
	}
	clients := map[string]*http.Client{}
	for _, role := range []string{apiv1.RoleClusterAdmin, apiv1.RoleOperator, apiv1.RoleViewer, apiv1.RoleNode, apiv1.RoleController} {
		clients[role] = e.httpClient(role)
	}
	for _, rt := range routes {
		for _, role := range []string{apiv1.RoleViewer, apiv1.RoleOperator, apiv1.RoleNode, apiv1.RoleController, apiv1.RoleClusterAdmin} {
			want, listed := rt.want[role]
			if !listed {
				continue
			}
			if got, _ := e.do(clients[role], rt.method, rt.path, rt.body, ""); got != want {
				t.Errorf("%s %s as %s: %d, want %d", rt.method, rt.path, role, got, want)
			}
		}
	}
	audit, err := admin.Audit(t.Context(), client.AuditQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var refused, added int
	for _, a := range audit {
		if a.Route == "POST /v1/gitops/{name}/approve" && a.Result == no && a.Role == apiv1.RoleOperator {
			refused++
		}
		if a.Route == "PUT /v1/gitops/{name}" && a.Result == ok {
			added++
		}
	}
	if refused != 1 || added != 2 {
		t.Fatalf("audit: %d refused approvals by operator, %d adds; want 1 and 2", refused, added)
	}
}

// TestWritesOnce sends a sync twice with one request id: it is applied
// once and the repeat is answered as replayed.
func TestWritesOnce(t *testing.T) {
	e := newEnv(t)
	admin := e.client(apiv1.RoleClusterAdmin)
	spec := api.GitSourceSpec{Repo: "/nonexistent", Branch: "main", Interval: "1h"}
	if _, err := admin.PutGitSource(t.Context(), "src", spec); err != nil {
		t.Fatal(err)
	}
	hc := e.httpClient(apiv1.RoleOperator)
	if st, replayed := e.do(hc, http.MethodPost, apiv1.GitSyncPath("src"), nil, "sync-request-0001"); st != http.StatusOK || replayed {
		t.Fatalf("first sync: %d replayed=%v", st, replayed)
	}
	if st, replayed := e.do(hc, http.MethodPost, apiv1.GitSyncPath("src"), nil, "sync-request-0001"); st != http.StatusOK || !replayed {
		t.Fatalf("repeated sync: %d replayed=%v, want 200 replayed", st, replayed)
	}
	if v := e.source(admin, "src"); v.Source.Requests.Sync != 1 {
		t.Fatalf("requests.sync = %d after one sync sent twice, want 1", v.Source.Requests.Sync)
	}
}
