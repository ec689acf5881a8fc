package cli

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
)

// fakeController is a TLS server with the certificates of kctl controller
// init that answers the routes the kctl commands use with canned data, for
// testing the commands' output without a real controller.
type fakeController struct {
	srv *httptest.Server
	ca  *pki.CA

	// closed is a loopback address nothing listens on: the member that
	// does not answer.
	closed string

	mu       sync.Mutex
	snapshot []byte
	calls    []string
}

// startFakeController runs kctl controller init (context "lab") against a
// fresh listener and serves on it.
func startFakeController(t *testing.T, e *kctlEnv) *fakeController {
	t.Helper()
	f := &fakeController{closed: closedAddrForTest(t)}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	out := filepath.Join(e.dir, "pki")
	e.must("controller", "init", "--name", "lab", "--controller", f.srv.Listener.Addr().String(), "--out", out)
	dir := filepath.Join(out, "controller-0")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca, err := pki.LoadCA(pki.KeyPair{CertPEM: read("ca.crt"), KeyPEM: read("ca.key")})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(read("server.crt"), read("server.key"))
	if err != nil {
		t.Fatal(err)
	}
	f.ca = ca
	f.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeController) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()
	role := r.TLS.PeerCertificates[0].Subject.Organization[0]
	body, _ := io.ReadAll(r.Body)
	switch r.Method + " " + r.URL.Path {
	case "GET /v1/members":
		fakeJSON(w, 200, []apiv1.Member{
			{ID: "controller-0", RaftAddr: "10.0.0.1:7000", HTTPAddr: f.srv.Listener.Addr().String(), Suffrage: "voter", Leader: true},
			{ID: "controller-1", RaftAddr: "10.0.0.2:7000", HTTPAddr: f.closed, Suffrage: "voter"},
			{ID: "controller-2", RaftAddr: "10.0.0.3:7000", Suffrage: "nonvoter"},
		})
	case "GET /v1/health":
		fakeJSON(w, 200, apiv1.Health{Role: apiv1.StateLeader, ID: "controller-0", Schema: 2})
	case "POST /v1/members":
		fakeJSON(w, 200, apiv1.WriteResponse{Index: 9})
	case "DELETE /v1/members/controller-0":
		fakeJSON(w, 409, apiv1.ErrorBody{Code: apiv1.CodeQuorumLoss, Message: "removing controller-0 would leave 1 of 3 voters, below a quorum of 2"})
	case "DELETE /v1/members/controller-2":
		fakeJSON(w, 200, apiv1.WriteResponse{Index: 10})
	case "POST /v1/revocations":
		var rr apiv1.RevokeRequest
		_ = json.Unmarshal(body, &rr)
		if rr.Serial != "5F:3A" {
			fakeJSON(w, 404, apiv1.ErrorBody{Code: apiv1.CodeNotFound, Message: "no issued certificate with serial " + rr.Serial + " is recorded"})
			return
		}
		fakeJSON(w, 200, apiv1.RevokeResponse{Serial: "5f3a", Subject: "node-105", Role: apiv1.RoleNode, NotAfter: "2026-11-30T12:00:00Z"})
	case "POST /v1/tokens":
		var tr apiv1.TokenRequest
		_ = json.Unmarshal(body, &tr)
		fakeJSON(w, 200, apiv1.TokenResponse{Token: "kcj-0123456789abcdef", Expires: "2026-11-29T23:00:00Z", NodeID: tr.NodeID, Rekey: tr.Rekey})
	case "POST /v1/certs":
		var req apiv1.CertRequest
		_ = json.Unmarshal(body, &req)
		now := time.Now()
		kp, err := f.ca.Issue(pki.CertRequest{CommonName: req.Name, Organization: []string{req.Role}, Usage: pki.UsageClient, Validity: time.Hour}, now)
		if err != nil {
			fakeJSON(w, 500, apiv1.ErrorBody{Code: apiv1.CodeInternal, Message: err.Error()})
			return
		}
		fakeJSON(w, 200, apiv1.CertResponse{Cert: string(kp.CertPEM), Key: string(kp.KeyPEM), CA: string(f.ca.CertPEM)})
	case "PUT /v1/objects/Probe/lab":
		if role != apiv1.RoleClusterAdmin {
			fakeJSON(w, 403, apiv1.ErrorBody{Code: apiv1.CodeForbidden, Message: "role " + role + " may not write Probe objects"})
			return
		}
		fakeJSON(w, 200, apiv1.WriteResponse{Index: 11})
	case "GET /v1/audit":
		fakeJSON(w, 200, []apiv1.AuditEntry{
			{Time: "2026-11-29T21:00:00Z", ID: "a1", Subject: "admin", Role: "cluster-admin", Method: "PUT", Route: "PUT /v1/objects/{kind}/{name...}", Object: "KubernetesCluster/lab", Result: 200},
			{Time: "2026-11-29T21:01:00.123456789Z", ID: "a2", Subject: "alice", Role: "viewer", Method: "PUT", Route: "PUT /v1/objects/{kind}/{name...}", Object: "KubernetesCluster/lab", Result: 403, Code: "forbidden"},
			{Time: "2026-11-29T21:02:00Z", ID: "a3", Method: "POST", Route: "POST /v1/join", Result: 401, Code: "unauthenticated"},
		})
	case "POST /v1/clusters/lab/kubeconfig":
		if role != apiv1.RoleClusterAdmin {
			fakeJSON(w, 403, apiv1.ErrorBody{Code: apiv1.CodeForbidden, Message: "role " + role + " may not call POST /v1/clusters/{name}/kubeconfig"})
			return
		}
		fakeJSON(w, 200, apiv1.KubeconfigResponse{Kubeconfig: "apiVersion: v1\nkind: Config\n", User: "kcore:admin", Groups: []string{"kcore:cluster-admins"}, Expires: "2026-11-30T05:00:00Z"})
	case "GET /v1/snapshot":
		f.mu.Lock()
		_, _ = w.Write(f.snapshot)
		f.mu.Unlock()
	case "PUT /v1/snapshot":
		f.mu.Lock()
		f.snapshot = body
		f.mu.Unlock()
		fakeJSON(w, 200, apiv1.WriteResponse{Index: 12})
	default:
		fakeJSON(w, 404, apiv1.ErrorBody{Code: apiv1.CodeNotFound, Message: "no route " + r.Method + " " + r.URL.Path})
	}
}

func (f *fakeController) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func fakeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", apiv1.ContentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// closedAddrForTest returns a loopback address nothing listens on.
func closedAddrForTest(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
