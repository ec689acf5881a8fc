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
	huge := `{"clusters":[{"kind":"KubernetesCluster","metadata":{"name":"c1","labels":{"x":"` + strings.Repeat("a", 5<<20) + `"}}}]}`
	plan := func(cluster string) string { return `{"clusters":[` + cluster + `]}` }
	tests := []struct {
		name   string
		client *http.Client
		method string
		path   string
		body   string
		status int
		code   string
	}{
		{"oversized plan", admin, http.MethodPost, "/v1/plan", huge, http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"oversized object", admin, http.MethodPut, apiv1.ObjectPath(probeKind, "p1"), `{"x":"` + strings.Repeat("a", 5<<20) + `"}`, http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"oversized facts", node, http.MethodPut, apiv1.NodePath("n1", "facts"), `{"hostname":"` + strings.Repeat("h", 5<<20) + `"}`, http.StatusRequestEntityTooLarge, apiv1.CodeTooLarge},
		{"malformed JSON", admin, http.MethodPost, "/v1/plan", `{"clusters":[{"kind":"KubernetesCluster",`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown field", admin, http.MethodPost, "/v1/plan", plan(strings.Replace(clusterJSON("c1"), `"spec":{`, `"spec":{"bogus":1,`, 1)), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"trailing data", admin, http.MethodPost, "/v1/plan", plan(clusterJSON("c1")) + "{}", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"empty body", admin, http.MethodPost, "/v1/apply", "", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"malformed object", admin, http.MethodPut, apiv1.ObjectPath(probeKind, "p1"), `{"x":`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown facts field", node, http.MethodPut, apiv1.NodePath("n1", "facts"), `{"hostname":"n1","root":true}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"unknown token field", admin, http.MethodPost, apiv1.PathTokens, `{"ttl":"1h","uses":5}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		{"bad cas", admin, http.MethodPut, apiv1.ObjectPath(probeKind, "p1") + "?cas=x", probeJSON("p1"), http.StatusBadRequest, apiv1.CodeBadRequest},
		{"audit is append-only", admin, http.MethodPut, apiv1.ObjectPath(apiv1.KindAudit, "x"), `{}`, http.StatusBadRequest, apiv1.CodeBadRequest},
	}
	st := e.c.WaitLeader().Node().State()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]uint64{}
			for _, k := range []string{api.KindKubernetesCluster, probeKind, api.KindNode, apiv1.KindJoinToken} {
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
