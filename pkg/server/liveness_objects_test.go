package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/store"
)

// TestNodeObjectsCarryLiveness: a Node read through /v1/objects carries the
// readiness and last heartbeat the leader saw, so kctl node list can show
// them; a node never heard keeps its stored status.
func TestNodeObjectsCarryLiveness(t *testing.T) {
	e := newEtcdRouteEnv(t, api.ClusterStatus{})
	for _, id := range []string{"n1", "n2"} {
		data, _ := json.Marshal(api.Node{Kind: api.KindNode, Metadata: api.ObjectMeta{Name: id}})
		cmd, _ := store.Put{Kind: api.KindNode, Name: id, Data: data}.Command()
		if _, err := e.be.Apply(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
	}
	if code, body := e.callAs("n1", apiv1.RoleNode, http.MethodPost, apiv1.NodePath("n1", "heartbeat"), ""); code != http.StatusOK {
		t.Fatalf("heartbeat = %d %s", code, body)
	}
	code, body := e.call(apiv1.RoleViewer, http.MethodGet, apiv1.ObjectPath(api.KindNode, ""), "")
	if code != http.StatusOK {
		t.Fatalf("list nodes = %d %s", code, body)
	}
	var l apiv1.List
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatal(err)
	}
	got := map[string]api.NodeHealth{}
	for _, o := range l.Items {
		var n api.Node
		if err := json.Unmarshal(o.Data, &n); err != nil {
			t.Fatal(err)
		}
		got[o.Name] = n.Status
	}
	if !got["n1"].Ready || got["n1"].LastHeartbeat == "" {
		t.Errorf("n1 sent a heartbeat but reads %+v", got["n1"])
	}
	if got["n2"].Ready || got["n2"].LastHeartbeat != "" {
		t.Errorf("n2 never sent one but reads %+v", got["n2"])
	}
}
