package security

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
	"kcore.dev/kcore/pkg/server"
)

// secretPlain is the plaintext of the sealed file in the NodeState the
// redaction tests store.
const secretPlain = "etcd-peer-private-key-7c21e0"

// putSealedState stores NodeState c1/cp1 with one sealed secret file and one
// plain file, as the orchestrator renders them.
func (e *env) putSealedState(admin *http.Client) {
	e.t.Helper()
	name := apiv1.NodeStateName("c1", "cp1")
	sealed, err := e.keyring.SealString(api.KindNodeState, name, secretPlain)
	if err != nil {
		e.t.Fatal(err)
	}
	ns := api.NodeState{Cluster: "c1", NodeID: "cp1", Generation: 1, Files: []api.File{
		{Path: "/etc/kubernetes/pki/etcd/peer.key", Mode: 0o600, Content: sealed, Secret: true},
		{Path: "/etc/kubernetes/kubelet.conf.d/10-kcore.conf", Mode: 0o644, Content: "plain-config"},
	}}
	want(e.t, e.call(admin, e.leader(), http.MethodPut, apiv1.ObjectPath(api.KindNodeState, name), ns), http.StatusOK, "")
}

// secretContent decodes NodeState objects from a list or a single object
// and returns the content of the secret file of each.
func secretContent(t *testing.T, r response) []string {
	t.Helper()
	var objs []apiv1.Object
	var list apiv1.List
	if err := json.Unmarshal(r.body, &list); err == nil && list.Items != nil {
		objs = list.Items
	} else {
		var o apiv1.Object
		r.decode(t, &o)
		objs = []apiv1.Object{o}
	}
	var out []string
	for _, o := range objs {
		var ns api.NodeState
		if err := json.Unmarshal(o.Data, &ns); err != nil {
			t.Fatalf("decode %s/%s: %v", o.Kind, o.Name, err)
		}
		for _, f := range ns.Files {
			if f.Secret {
				out = append(out, f.Content)
			} else if f.Content != "plain-config" {
				t.Fatalf("plain file %s changed to %q", f.Path, f.Content)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no secret file in %s", r.body)
	}
	return out
}

// TestNodeStateSecretsRedacted: viewers and operators reading NodeStates
// through /v1/objects (get, list, blocking list, through a follower) see
// secret files as <redacted>, never the sealed ciphertext or the plaintext;
// cluster-admin sees the ciphertext (as in a snapshot), never the
// plaintext; the owning node still gets the plaintext on its own route.
func TestNodeStateSecretsRedacted(t *testing.T) {
	e := newEnv(t, 3)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	e.putSealedState(admin)
	e.c.WaitCaughtUp()
	get := apiv1.ObjectPath(api.KindNodeState, apiv1.NodeStateName("c1", "cp1"))
	list := apiv1.ObjectPath(api.KindNodeState, "")
	reads := []string{get, list, list + "?index=1&wait=1s", get + "?stale=true", list + "?stale=true"}

	for _, role := range []string{apiv1.RoleViewer, apiv1.RoleOperator} {
		c := e.client(role, role+"-1")
		for _, a := range []struct {
			name string
			api  func() string
		}{{"leader", func() string { return e.leader().Addr }}, {"follower", func() string { return e.follower().Addr }}} {
			for _, p := range reads {
				t.Run(role+" "+a.name+" "+p, func(t *testing.T) {
					r, err := do(c, http.MethodGet, "https://"+a.api()+p, nil)
					if err != nil {
						t.Fatal(err)
					}
					want(t, r, http.StatusOK, "")
					if bytes.Contains(r.body, []byte(secrets.StringPrefix)) || bytes.Contains(r.body, []byte(secretPlain)) {
						t.Fatalf("%s read secret material: %s", role, r.body)
					}
					for _, got := range secretContent(t, r) {
						if got != "<redacted>" {
							t.Fatalf("secret file content %q, want <redacted>", got)
						}
					}
				})
			}
		}
	}

	t.Run("cluster-admin sees the ciphertext only", func(t *testing.T) {
		for _, p := range reads {
			r := e.call(admin, e.leader(), http.MethodGet, p, nil)
			want(t, r, http.StatusOK, "")
			if bytes.Contains(r.body, []byte(secretPlain)) {
				t.Fatalf("cluster-admin read the plaintext through %s", p)
			}
			for _, got := range secretContent(t, r) {
				if !secrets.IsSealedString(got) {
					t.Fatalf("cluster-admin got %q through %s, want the sealed value", got, p)
				}
			}
		}
	})
	t.Run("node reads its plaintext on its own route", func(t *testing.T) {
		node := e.client(apiv1.RoleNode, "cp1")
		for _, a := range []string{e.leader().Addr, e.follower().Addr} {
			r, err := do(node, http.MethodGet, "https://"+a+apiv1.NodePath("cp1", "state"), nil)
			if err != nil {
				t.Fatal(err)
			}
			want(t, r, http.StatusOK, "")
			if got := secretContent(t, r); got[0] != secretPlain {
				t.Fatalf("node got %q, want its plaintext", got[0])
			}
		}
	})
	t.Run("other roles", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			c      *http.Client
			status int
			code   string
		}{
			{"node", e.client(apiv1.RoleNode, "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
			{"controller", e.client(apiv1.RoleController, "r9"), http.StatusForbidden, apiv1.CodeForbidden},
			{"anonymous", e.clientFor(pki.KeyPair{}), http.StatusUnauthorized, apiv1.CodeUnauthenticated},
		} {
			for _, p := range []string{get, list} {
				r := e.call(tt.c, e.leader(), http.MethodGet, p, nil)
				want(t, r, tt.status, tt.code)
				if bytes.Contains(r.body, []byte(secrets.StringPrefix)) {
					t.Fatalf("%s read the ciphertext through %s", tt.name, p)
				}
			}
		}
	})
	t.Run("viewer and operator on the node route", func(t *testing.T) {
		for _, role := range []string{apiv1.RoleViewer, apiv1.RoleOperator, apiv1.RoleClusterAdmin} {
			r := e.call(e.client(role, "x"), e.leader(), http.MethodGet, apiv1.NodePath("cp1", "state"), nil)
			want(t, r, http.StatusOK, "")
			if got := secretContent(t, r); got[0] != "<redacted>" {
				t.Fatalf("%s got %q on the node route, want <redacted>", role, got[0])
			}
		}
	})
}

// report is a NodeReport body for cluster and node.
func report(cluster, node string) api.NodeReport {
	return api.NodeReport{NodeID: node, Cluster: cluster, ObservedGeneration: 1,
		Items: []api.ItemStatus{{Kind: "unit", Name: "kubelet", State: api.ItemOK}}}
}

// reportOfSize is a report for c1/cp1 whose JSON body is exactly n bytes.
func reportOfSize(t *testing.T, n int) []byte {
	t.Helper()
	rep := report("c1", "cp1")
	rep.Items[0].Message = "x"
	b, _ := json.Marshal(rep)
	rep.Items[0].Message = strings.Repeat("x", n-len(b)+1)
	b, _ = json.Marshal(rep)
	if len(b) != n {
		t.Fatalf("report of %d bytes, want %d", len(b), n)
	}
	return b
}

// TestReportsOnlyForOwnClusters: a node may store a NodeReport only for a
// cluster whose manifest names it (or that the controller rendered a state
// for it in), only within MaxReportBody, and only MaxReportsPerNode of them.
func TestReportsOnlyForOwnClusters(t *testing.T) {
	e := newEnv(t, 3)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	cp1 := e.client(apiv1.RoleNode, "cp1")
	e.seedCluster("c1")
	e.seedClusterJSON("c3", strings.ReplaceAll(clusterJSON("c3"), `"cp1"`, `"cp9"`))
	e.c.WaitCaughtUp()
	path := apiv1.NodePath("cp1", "report")

	tests := []struct {
		name   string
		c      *http.Client
		path   string
		body   any
		status int
		code   string
	}{
		{"node reports its cluster", cp1, path, report("c1", "cp1"), http.StatusOK, ""},
		{"node reports through a follower", cp1, path, report("c1", "cp1"), http.StatusOK, ""},
		{"node reports a cluster that does not exist", cp1, path, report("nope", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
		{"node reports a cluster it is not in", cp1, path, report("c3", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
		{"node not in any cluster reports", e.client(apiv1.RoleNode, "n7"), apiv1.NodePath("n7", "report"), report("c1", "n7"), http.StatusForbidden, apiv1.CodeForbidden},
		{"node reports for another node", cp1, apiv1.NodePath("cp9", "report"), report("c3", "cp9"), http.StatusForbidden, apiv1.CodeForbidden},
		{"node names another node in the body", cp1, path, report("c1", "cp9"), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"report at the size limit", cp1, path, reportOfSize(t, server.MaxReportBody), http.StatusOK, ""},
		{"report over the size limit", cp1, path, reportOfSize(t, server.MaxReportBody+1), http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"4 MiB report", cp1, path, reportOfSize(t, 4<<20-64), http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"viewer", e.client(apiv1.RoleViewer, "v"), path, report("c1", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
		{"operator", e.client(apiv1.RoleOperator, "o"), path, report("c1", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
		{"controller", e.client(apiv1.RoleController, "r9"), path, report("c1", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
		{"anonymous", e.clientFor(pki.KeyPair{}), path, report("c1", "cp1"), http.StatusUnauthorized, apiv1.CodeUnauthenticated},
		{"cluster-admin for a member", admin, path, report("c1", "cp1"), http.StatusOK, ""},
		{"cluster-admin for a non-member", admin, path, report("c3", "cp1"), http.StatusForbidden, apiv1.CodeForbidden},
	}
	st := e.c.WaitLeader().Node().State()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := e.leader()
			if strings.Contains(tt.name, "follower") {
				a = e.follower()
			}
			r := e.call(tt.c, a, http.MethodPut, tt.path, tt.body)
			want(t, r, tt.status, tt.code)
		})
	}
	for _, name := range []string{"nope/cp1", "c3/cp1", "c1/n7", "c3/cp9"} {
		if _, ok := st.Get(apiv1.KindNodeReport, name); ok {
			t.Errorf("refused report %s was stored", name)
		}
	}
	e.findAudit(func(a apiv1.AuditEntry) bool {
		return a.Subject == "cp1" && a.Result == http.StatusForbidden && a.Object == apiv1.KindNodeReport+"/c3/cp1"
	})
}

// TestReportsPerNodeBounded: a node named by more clusters than
// MaxReportsPerNode stores at most that many reports; updating one it has
// still works.
func TestReportsPerNodeBounded(t *testing.T) {
	e := newEnv(t, 1)
	cp1 := e.client(apiv1.RoleNode, "cp1")
	l := e.leader()
	for i := range server.MaxReportsPerNode + 1 {
		name := fmt.Sprintf("c%d", i)
		e.seedCluster(name)
	}
	path := apiv1.NodePath("cp1", "report")
	for i := range server.MaxReportsPerNode {
		want(t, e.call(cp1, l, http.MethodPut, path, report(fmt.Sprintf("c%d", i), "cp1")), http.StatusOK, "")
	}
	r := e.call(cp1, l, http.MethodPut, path, report(fmt.Sprintf("c%d", server.MaxReportsPerNode), "cp1"))
	want(t, r, http.StatusForbidden, apiv1.CodeForbidden)
	if !strings.Contains(r.errorBody(t).Message, fmt.Sprint(server.MaxReportsPerNode)) {
		t.Fatalf("refusal %q does not name the limit", r.errorBody(t).Message)
	}
	again := report("c0", "cp1")
	again.ObservedGeneration = 2
	want(t, e.call(cp1, l, http.MethodPut, path, again), http.StatusOK, "")
	if n := e.c.WaitLeader().Node().State().Count(apiv1.KindNodeReport); n != server.MaxReportsPerNode {
		t.Fatalf("%d reports stored, want %d", n, server.MaxReportsPerNode)
	}
}
