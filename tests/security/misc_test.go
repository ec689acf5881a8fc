package security

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/secrets"
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
