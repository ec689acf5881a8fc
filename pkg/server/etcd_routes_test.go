package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/etcdsnap"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/store"
)

// localBackend is a one-replica leader over an in-memory store.
type localBackend struct {
	mu    sync.Mutex
	st    *store.State
	index uint64
	// interpose, while positive, commits a write of its own before the
	// next command and counts down: the write a concurrent writer (the
	// orchestrator) makes between a route's read and its put.
	interpose int
	// interposed is that write.
	interposed store.Command
}

func (b *localBackend) State() *store.State { return b.st }
func (b *localBackend) Apply(_ context.Context, cmd store.Command) (store.Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.interpose > 0 {
		b.interpose--
		b.index++
		if res := b.st.Apply(b.index, b.interposed); res.Err != nil {
			return res, nil
		}
	}
	b.index++
	return b.st.Apply(b.index, cmd), nil
}
func (b *localBackend) ID() string                                     { return "r1" }
func (b *localBackend) RaftState() string                              { return apiv1.StateLeader }
func (b *localBackend) Leader() (string, string)                       { return "r1", "" }
func (b *localBackend) VerifyLeader(context.Context) error             { return nil }
func (b *localBackend) LastIndex() uint64                              { return b.st.LastIndex() }
func (b *localBackend) Peers(context.Context) ([]Peer, error)          { return nil, nil }
func (b *localBackend) AddVoter(context.Context, string, string) error { return nil }
func (b *localBackend) RemoveServer(context.Context, string) error     { return nil }
func (b *localBackend) Snapshot(context.Context, io.Writer) error      { return nil }
func (b *localBackend) Restore(context.Context, io.Reader) error       { return nil }

// etcdRouteEnv is a server over a store holding cluster lab (phase) and one
// etcd snapshot of it.
type etcdRouteEnv struct {
	t    *testing.T
	s    *Server
	be   *localBackend
	snap string
}

func newEtcdRouteEnv(t *testing.T, status api.ClusterStatus) *etcdRouteEnv {
	t.Helper()
	key, _ := secrets.NewKey()
	kr, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.NewCA("test", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	be := &localBackend{st: store.New(nil)}
	s, err := New(Config{Backend: be, CA: ca, Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	e := &etcdRouteEnv{t: t, s: s, be: be}
	c := api.KubernetesCluster{APIVersion: api.APIVersion, Kind: api.KindKubernetesCluster, Metadata: api.ObjectMeta{Name: "lab"}, Status: status}
	data, _ := json.Marshal(c)
	raw := []byte("etcd bytes holding hunter2")
	sum := sha256.Sum256(raw)
	info, ops, err := etcdsnap.Ops(kr, be.st, "lab", &etcdsnap.Snapshot{Data: raw, Member: "cp1", SHA256: hex.EncodeToString(sum[:]), Revision: 5}, "manual", time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, store.Op{Put: &store.Put{Kind: api.KindKubernetesCluster, Name: "lab", Data: data}})
	cmd, _ := store.Batch{Ops: ops}.Command()
	if _, err := be.Apply(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	e.snap = info.Name
	return e
}

// call serves method path with body as role and returns the status and body.
func (e *etcdRouteEnv) call(role, method, path, body string) (int, string) {
	return e.callAs("alice", role, method, path, body)
}

// callAs is call with the certificate's CommonName set to subject.
func (e *etcdRouteEnv) callAs(subject, role, method, path, body string) (int, string) {
	return e.serve(subject, role, method, path, body, nil)
}

// serve is callAs with extra request headers.
func (e *etcdRouteEnv) serve(subject, role, method, path, body string, header map[string]string) (int, string) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: subject, Organization: []string{role}}}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	w := httptest.NewRecorder()
	e.s.Handler().ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func (e *etcdRouteEnv) audited(route string, result int) bool {
	for _, o := range e.be.st.List(apiv1.KindAudit) {
		var a apiv1.AuditEntry
		if json.Unmarshal(o.Data, &a) == nil && a.Route == route && a.Result == result && a.Object == "KubernetesCluster/lab" {
			return true
		}
	}
	return false
}

func TestEtcdRoutesRoles(t *testing.T) {
	snapshots, restore := apiv1.EtcdSnapshotsPath("lab"), apiv1.EtcdRestorePath("lab")
	tests := []struct {
		name, role, method, path, body string
		want                           int
	}{
		{"viewer snapshots", apiv1.RoleViewer, http.MethodPost, snapshots, `{}`, http.StatusForbidden},
		{"viewer restores", apiv1.RoleViewer, http.MethodPost, restore, `{"snapshot":"x"}`, http.StatusForbidden},
		{"node restores", apiv1.RoleNode, http.MethodPost, restore, `{"snapshot":"x"}`, http.StatusForbidden},
		{"controller snapshots", apiv1.RoleController, http.MethodPost, snapshots, `{}`, http.StatusForbidden},
		{"node lists", apiv1.RoleNode, http.MethodGet, snapshots, ``, http.StatusForbidden},
		{"viewer lists", apiv1.RoleViewer, http.MethodGet, snapshots, ``, http.StatusOK},
		{"operator lists", apiv1.RoleOperator, http.MethodGet, snapshots, ``, http.StatusOK},
		{"operator snapshots an unknown cluster", apiv1.RoleOperator, http.MethodPost, apiv1.EtcdSnapshotsPath("nope"), ``, http.StatusNotFound},
		{"operator restores an unknown snapshot", apiv1.RoleOperator, http.MethodPost, restore, `{"snapshot":"20260101T000000Z-manual"}`, http.StatusNotFound},
		{"operator restores nothing", apiv1.RoleOperator, http.MethodPost, restore, `{}`, http.StatusBadRequest},
		{"operator restores with a bad body", apiv1.RoleOperator, http.MethodPost, restore, `{"snapshot":1}`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseDegraded})
			code, body := e.call(tt.role, tt.method, tt.path, tt.body)
			if code != tt.want {
				t.Fatalf("%s %s as %s = %d %s, want %d", tt.method, tt.path, tt.role, code, body, tt.want)
			}
			if strings.Contains(body, "hunter2") || strings.Contains(body, "ciphertext") {
				t.Fatalf("answer holds snapshot content: %s", body)
			}
			if code == http.StatusForbidden {
				route := tt.method + " /v1/clusters/{name}/etcd/" + tt.path[strings.LastIndex(tt.path, "/")+1:]
				if !e.audited(route, http.StatusForbidden) {
					t.Errorf("refusal of %s not audited", route)
				}
			}
		})
	}
}

func TestEtcdRestoreRoute(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseDegraded, EtcdGeneration: 2})
	short := strings.TrimPrefix(e.snap, "lab/")
	code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdRestorePath("lab"), `{"snapshot":"`+short+`"}`)
	if code != http.StatusOK {
		t.Fatalf("restore = %d %s", code, body)
	}
	var resp apiv1.EtcdRestoreResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Snapshot != e.snap || resp.Generation != 3 || resp.Index == 0 {
		t.Fatalf("restore answered %s (%v)", body, err)
	}
	obj, _ := e.be.st.Get(api.KindKubernetesCluster, "lab")
	var c api.KubernetesCluster
	if err := json.Unmarshal(obj.Data, &c); err != nil {
		t.Fatal(err)
	}
	rs := c.Status.EtcdRestore
	if c.Status.Phase != api.PhaseUpdating || rs == nil || rs.Snapshot != e.snap || rs.Generation != 3 || rs.RequestedBy != "alice" || rs.Phase != api.EtcdRestorePhaseRestoring {
		t.Fatalf("cluster status after the request: %+v", c.Status)
	}
	if !e.audited("POST /v1/clusters/{name}/etcd/restore", http.StatusOK) {
		t.Error("restore request not audited")
	}
	if code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdRestorePath("lab"), `{"snapshot":"`+e.snap+`"}`); code != http.StatusConflict {
		t.Fatalf("second restore = %d %s, want 409", code, body)
	}

	code, body = e.call(apiv1.RoleViewer, http.MethodGet, apiv1.EtcdSnapshotsPath("lab"), "")
	var list []apiv1.EtcdSnapshotInfo
	if err := json.Unmarshal([]byte(body), &list); code != http.StatusOK || err != nil || len(list) != 1 || list[0].Name != e.snap || list[0].Revision != 5 {
		t.Fatalf("list = %d %s", code, body)
	}
	if bytes.Contains([]byte(body), []byte("content")) {
		t.Fatalf("list holds content: %s", body)
	}
}

// TestEtcdRestoreAfterConcurrentWrites: a status write that commits
// between the route's read of the cluster and its put makes the route read
// again and try again, the other write kept; it answers 409 only when
// every one of its casAttempts attempts lost that race.
func TestEtcdRestoreAfterConcurrentWrites(t *testing.T) {
	for _, tc := range []struct {
		name      string
		interpose int
		want      int
	}{
		{"one write in between", 1, http.StatusOK},
		{"a write before every attempt", casAttempts, http.StatusConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
			obj, _ := e.be.st.Get(api.KindKubernetesCluster, "lab")
			var c api.KubernetesCluster
			if err := json.Unmarshal(obj.Data, &c); err != nil {
				t.Fatal(err)
			}
			c.Status.LastHealthCheck = "2026-12-02T04:00:00Z"
			data, _ := json.Marshal(c)
			e.be.interposed, _ = store.Put{Kind: api.KindKubernetesCluster, Name: "lab", Data: data}.Command()
			e.be.interpose = tc.interpose
			short := strings.TrimPrefix(e.snap, "lab/")
			code, body := e.serve("alice", apiv1.RoleOperator, http.MethodPost, apiv1.EtcdRestorePath("lab"), `{"snapshot":"`+short+`"}`,
				map[string]string{apiv1.HeaderRequestID: "restore-request-0001"})
			if code != tc.want {
				t.Fatalf("restore = %d %s, want %d", code, body, tc.want)
			}
			obj, _ = e.be.st.Get(api.KindKubernetesCluster, "lab")
			var got api.KubernetesCluster
			if err := json.Unmarshal(obj.Data, &got); err != nil {
				t.Fatal(err)
			}
			if got.Status.LastHealthCheck != "2026-12-02T04:00:00Z" {
				t.Errorf("the concurrent write was lost: last health check %q", got.Status.LastHealthCheck)
			}
			if restoring := got.Status.EtcdRestore != nil; restoring != (tc.want == http.StatusOK) {
				t.Errorf("restore recorded = %v after %d", restoring, code)
			}
		})
	}
}

func TestEtcdRestoreRefusedWhileDeleting(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseDeleting})
	if code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdRestorePath("lab"), `{"snapshot":"`+e.snap+`"}`); code != http.StatusConflict {
		t.Fatalf("restore of a deleting cluster = %d %s, want 409", code, body)
	}
	if code, body := e.call(apiv1.RoleOperator, http.MethodPost, apiv1.EtcdSnapshotsPath("lab"), ``); code != http.StatusConflict {
		t.Fatalf("snapshot of a deleting cluster = %d %s, want 409", code, body)
	}
}

// TestEtcdSnapshotWithheldFromObjects: the generic object routes never
// return a snapshot's data, not even sealed.
func TestEtcdSnapshotWithheldFromObjects(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{Phase: api.PhaseReady})
	for _, path := range []string{apiv1.ObjectPath(apiv1.KindEtcdSnapshot, ""), apiv1.ObjectPath(apiv1.KindEtcdSnapshot, e.snap)} {
		code, body := e.call(apiv1.RoleClusterAdmin, http.MethodGet, path, "")
		if code != http.StatusOK || strings.Contains(body, "ciphertext") || strings.Contains(body, "sha256") {
			t.Fatalf("GET %s = %d %s", path, code, body)
		}
	}
}
