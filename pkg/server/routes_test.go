package server

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"kcore.dev/kcore/pkg/apiv1"
)

// TestRoutingTable checks the table's invariants: cluster-admin may call
// everything, every mutating route but heartbeat is audited, only join is
// anonymous, every route naming a node limits nodes to their own id, and
// role controller reaches only membership (joining, recording itself) and
// summaries besides reads.
func TestRoutingTable(t *testing.T) {
	s := &Server{}
	seen := map[string]bool{}
	for _, rt := range s.routes(prometheus.NewRegistry()) {
		method, path, _ := strings.Cut(rt.pattern, " ")
		if seen[rt.pattern] {
			t.Errorf("%s listed twice", rt.pattern)
		}
		seen[rt.pattern] = true
		if !rt.allows(apiv1.RoleClusterAdmin) {
			t.Errorf("%s: cluster-admin refused", rt.pattern)
		}
		if rt.allows("root") || rt.allows("") {
			t.Errorf("%s: unknown role allowed", rt.pattern)
		}
		// POST /v1/plan only reads: it computes a plan and writes nothing.
		mutating := method != http.MethodGet && rt.pattern != "POST /v1/plan"
		if mutating && !rt.audit && !strings.HasSuffix(path, "/heartbeat") {
			t.Errorf("%s: mutating route not audited", rt.pattern)
		}
		if mutating && rt.mode != leaderWrite {
			t.Errorf("%s: mutating route not answered by the leader", rt.pattern)
		}
		if rt.anonymous != (rt.pattern == "POST /v1/join") {
			t.Errorf("%s: anonymous=%v", rt.pattern, rt.anonymous)
		}
		if strings.HasPrefix(path, apiv1.PathNodes) && rt.allows(apiv1.RoleNode) && !rt.ownNode {
			t.Errorf("%s: nodes may call it for other nodes", rt.pattern)
		}
		// Replicas send each other etcd snapshot files (sealed under the
		// controllers' key) and nothing else.
		peerFile := rt.pattern == "GET /v1/clusters/{name}/etcd/snapshots/{snapshot}/file"
		membership := rt.pattern == "POST /v1/members" || rt.pattern == "PUT /v1/members/{id}"
		if rt.allows(apiv1.RoleController) && !rt.anyRole && !membership && rt.pattern != summaryRoute && !peerFile {
			t.Errorf("%s: role controller allowed", rt.pattern)
		}
	}
}

func TestDecodeStrict(t *testing.T) {
	type body struct {
		A int `json:"a"`
	}
	tests := []struct {
		name    string
		in      string
		limit   int64
		tooBig  bool
		wantErr bool
	}{
		{"ok", `{"a":1}`, 100, false, false},
		{"unknown field", `{"a":1,"b":2}`, 100, false, true},
		{"trailing value", `{"a":1}{"a":2}`, 100, false, true},
		{"trailing garbage", `{"a":1} x`, 100, false, true},
		{"malformed", `{"a":`, 100, false, true},
		{"empty", ``, 100, false, true},
		{"wrong type", `{"a":"x"}`, 100, false, true},
		{"over limit", `{"a":1111111111}`, 5, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{ResponseWriter: nopWriter{}}
			r := http.MaxBytesReader(rec, nopCloser{strings.NewReader(tt.in)}, tt.limit)
			var b body
			err := decodeStrict(r, &b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) != tt.tooBig {
				t.Fatalf("err = %v, want too-large %v", err, tt.tooBig)
			}
			var ae *apiError
			if tt.wantErr && !tt.tooBig && (!errors.As(err, &ae) || ae.body.Code != apiv1.CodeBadRequest) {
				t.Fatalf("err = %v, want bad-request", err)
			}
		})
	}
}

func TestHasKindPrefix(t *testing.T) {
	tests := []struct {
		object, filter string
		want           bool
	}{
		{"KubernetesCluster/c1", "KubernetesCluster", true},
		{"KubernetesCluster/c1", "Kubernetes", false},
		{"KubernetesCluster/c1", "KubernetesCluster/c", false},
		{"Node/n1", "KubernetesCluster", false},
		{"", "Node", false},
	}
	for _, tt := range tests {
		if got := hasKindPrefix(tt.object, tt.filter); got != tt.want {
			t.Errorf("hasKindPrefix(%q, %q) = %v, want %v", tt.object, tt.filter, got, tt.want)
		}
	}
}
