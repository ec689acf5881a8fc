package security

import (
	"net/http"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

// TestBadBodies sends oversized, malformed and unknown-field bodies: each is
// refused with a 4xx and the store does not change.
func TestBadBodies(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	node := e.client(apiv1.RoleNode, "n1")
	huge := `{"kind":"KubernetesCluster","metadata":{"name":"c1","labels":{"x":"` + strings.Repeat("a", 5<<20) + `"}}}`
	tests := []struct {
		name   string
		client *http.Client
		method string
		path   string
		body   string
		status int
		code   string
	}{
		{"oversized cluster", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), huge, http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"oversized facts", node, http.MethodPut, apiv1.NodePath("n1", "facts"), `{"hostname":"` + strings.Repeat("h", 5<<20) + `"}`, http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"malformed JSON", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), `{"kind":"KubernetesCluster",`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown field", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), strings.Replace(clusterJSON("c1"), `"spec":{`, `"spec":{"bogus":1,`, 1), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"trailing data", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), clusterJSON("c1") + "{}", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"empty body", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), "", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"name mismatch", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "other"), clusterJSON("c1"), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"invalid cluster", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1"), strings.Replace(clusterJSON("c1"), "10.244.0.0/16", "not-a-cidr", 1), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown facts field", node, http.MethodPut, apiv1.NodePath("n1", "facts"), `{"hostname":"n1","root":true}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown token field", admin, http.MethodPost, apiv1.PathTokens, `{"ttl":"1h","uses":5}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"bad cas", admin, http.MethodPut, apiv1.ObjectPath(api.KindKubernetesCluster, "c1") + "?cas=x", clusterJSON("c1"), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"audit is append-only", admin, http.MethodPut, apiv1.ObjectPath(apiv1.KindAudit, "x"), `{}`, http.StatusBadRequest, apiv1.CodeBadRequest},
	}
	st := e.c.WaitLeader().Node().State()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]uint64{}
			for _, k := range []string{api.KindKubernetesCluster, api.KindNode, apiv1.KindJoinToken} {
				before[k] = st.KindIndex(k)
			}
			r := e.call(tt.client, e.leader(), tt.method, tt.path, tt.body)
			want(t, r, tt.status, tt.code)
			for k, idx := range before {
				if got := st.KindIndex(k); got != idx {
					t.Fatalf("kind %s changed: index %d → %d", k, idx, got)
				}
			}
		})
	}
	if n := st.Count(api.KindKubernetesCluster); n != 0 {
		t.Fatalf("%d clusters stored, want 0", n)
	}
}
