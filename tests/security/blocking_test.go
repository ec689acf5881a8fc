package security

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func TestBlockingQuery(t *testing.T) {
	e := newEnv(t, 1)
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	viewer := e.client(apiv1.RoleViewer, "victor")
	path := apiv1.ObjectPath(probeKind, "c1")
	r := e.call(admin, e.leader(), http.MethodPut, path, probeJSON("c1"))
	want(t, r, http.StatusOK, "")
	var w apiv1.WriteResponse
	r.decode(t, &w)

	// Unchanged: the wait runs out and answers the same index.
	r = e.call(viewer, e.leader(), http.MethodGet, fmt.Sprintf("%s?index=%d&wait=50ms", path, w.Index), nil)
	want(t, r, http.StatusOK, "")
	if got := r.header.Get(apiv1.HeaderIndex); got != strconv.FormatUint(w.Index, 10) {
		t.Fatalf("timed-out query index %s, want %d", got, w.Index)
	}

	for _, p := range []string{path, apiv1.ObjectPath(probeKind, "")} {
		t.Run(p, func(t *testing.T) {
			cur := e.c.WaitLeader().Node().State().KeyIndex(probeKind, strings.TrimPrefix(p, apiv1.ObjectPath(probeKind, "")+"/"))
			done := make(chan response, 1)
			go func() {
				r, err := do(viewer, http.MethodGet, fmt.Sprintf("https://%s%s?index=%d&wait=1m", e.leader().Addr, p, cur), nil)
				if err != nil {
					r = response{status: -1, body: []byte(err.Error())}
				}
				done <- r
			}()
			select {
			case r := <-done:
				t.Fatalf("blocking query returned before the change: %d %s", r.status, r.body)
			default:
			}
			changed := `{"name":"c1","changed":true}`
			want(t, e.call(admin, e.leader(), http.MethodPut, path, changed), http.StatusOK, "")
			r := <-done
			want(t, r, http.StatusOK, "")
			idx, _ := strconv.ParseUint(r.header.Get(apiv1.HeaderIndex), 10, 64)
			if idx <= cur {
				t.Fatalf("index %d after the change, want > %d", idx, cur)
			}
			if !strings.Contains(string(r.body), `"changed":true`) {
				t.Fatalf("blocking query answered the old object: %s", r.body)
			}
			// Switch back for the next case.
			want(t, e.call(admin, e.leader(), http.MethodPut, path, probeJSON("c1")), http.StatusOK, "")
		})
	}
}

func TestNodeStateBlocksAndRedacts(t *testing.T) {
	e := newEnv(t, 1)
	l := e.leader()
	node := e.client(apiv1.RoleNode, "n1")
	viewer := e.client(apiv1.RoleViewer, "victor")
	sealed, err := e.keyring.SealString(api.KindNodeState, "c1/n1", "PRIVATE KEY BYTES")
	if err != nil {
		t.Fatal(err)
	}
	ns := api.NodeState{Cluster: "c1", NodeID: "n1", Generation: 1, Files: []api.File{
		{Path: "/etc/kubernetes/pki/apiserver.key", Mode: 0o600, Content: sealed, Secret: true},
		{Path: "/etc/kubernetes/kubelet.conf", Mode: 0o644, Content: "plain"},
	}}
	data, _ := json.Marshal(ns)
	r := e.call(node, l, http.MethodGet, apiv1.NodePath("n1", "state"), nil)
	want(t, r, http.StatusOK, "")
	start := r.header.Get(apiv1.HeaderIndex)
	done := make(chan response, 1)
	go func() {
		r, err := do(node, http.MethodGet, "https://"+l.Addr+apiv1.NodePath("n1", "state")+"?index="+start+"&wait=1m", nil)
		if err != nil {
			r = response{status: -1, body: []byte(err.Error())}
		}
		done <- r
	}()
	admin := e.client(apiv1.RoleClusterAdmin, "alice")
	want(t, e.call(admin, l, http.MethodPut, apiv1.ObjectPath(api.KindNodeState, "c1/n1"), string(data)), http.StatusOK, "")
	r = <-done
	want(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.body), "PRIVATE KEY BYTES") {
		t.Fatalf("node did not get its opened secret: %s", r.body)
	}
	r = e.call(viewer, l, http.MethodGet, apiv1.NodePath("n1", "state"), nil)
	want(t, r, http.StatusOK, "")
	if strings.Contains(string(r.body), "PRIVATE KEY BYTES") || strings.Contains(string(r.body), "kcore-sealed") || !strings.Contains(string(r.body), "plain") {
		t.Fatalf("viewer saw secret material or lost plain files: %s", r.body)
	}
}

// TestEmptyKindBlocks: a kind nothing was written to answers index 1, and a
// blocking query sent back with it waits instead of returning at once (an
// agent whose NodeState does not exist yet must not spin).
func TestEmptyKindBlocks(t *testing.T) {
	e := newEnv(t, 1)
	node := e.client(apiv1.RoleNode, "n9")
	r := e.call(node, e.leader(), http.MethodGet, apiv1.NodePath("n9", "state"), nil)
	want(t, r, http.StatusOK, "")
	if got := r.header.Get(apiv1.HeaderIndex); got != "1" {
		t.Fatalf("index of an empty kind = %q, want 1", got)
	}
	done := make(chan response, 1)
	go func() {
		r, err := do(node, http.MethodGet, fmt.Sprintf("https://%s%s?index=1&wait=1m", e.leader().Addr, apiv1.NodePath("n9", "state")), nil)
		if err != nil {
			r = response{status: -1, body: []byte(err.Error())}
		}
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("blocking query on an empty kind returned at once: %d %s", r.status, r.body)
	case <-time.After(300 * time.Millisecond):
	}
}
