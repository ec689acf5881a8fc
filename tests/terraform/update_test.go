package terraform

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
)

// updateBlock is a kcore_cluster_update block named name; extra goes
// inside it.
func updateBlock(name, extra string) string {
	return `
resource "kcore_cluster_update" "` + name + `" {
  name    = "` + name + `"
  version = "0.5.0"
` + extra + `}
`
}

// storedUpdate reads a ClusterUpdate from the controller; ok is false when
// it is not stored.
func (e *env) storedUpdate(name string) (api.ClusterUpdate, bool) {
	e.t.Helper()
	var u api.ClusterUpdate
	o, err := e.admin.Get(e.t.Context(), api.KindClusterUpdate, name)
	if errors.Is(err, client.ErrNotFound) {
		return u, false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if err := json.Unmarshal(o.Data, &u); err != nil {
		e.t.Fatal(err)
	}
	return u, true
}

// applyUpdateDirect stores a ClusterUpdate the way kctl apply -f does,
// outside tofu.
func (e *env) applyUpdateDirect(u api.ClusterUpdate) {
	e.t.Helper()
	req := apiv1.PlanRequest{Updates: []api.ClusterUpdate{u}}
	resp, err := e.admin.Plan(e.t.Context(), req)
	if err != nil || resp.Blocked() {
		e.t.Fatalf("plan update %s: %+v, %v", u.Metadata.Name, resp, err)
	}
	if _, err := e.admin.Apply(e.t.Context(), req, resp.Plan.Index, resp.Hash); err != nil {
		e.t.Fatalf("apply update %s: %v", u.Metadata.Name, err)
	}
}

// TestClusterUpdate drives kcore_cluster_update through tofu against the
// controller: create with the controller's defaults planned, a clean plan
// after it, an in-place change of its strategy, import of one kctl stored
// (a clean plan after it), and destroy, which removes both through plan
// and apply as kctl update delete does (the controller refuses a plain
// DELETE of a ClusterUpdate).
func TestClusterUpdate(t *testing.T) {
	e := newEnv(t)
	e.putNode("node-201", "192.168.41.201")
	e.putNode("node-202", "192.168.41.202")

	// Create: the plan is the controller's, with its defaults.
	e.write(updateBlock("os", "  all_nodes = true\n"))
	out := e.Must("plan")
	mustContain(t, "create plan", out, `kcore_cluster_update.os will be created`, `create update os`, `"one-at-a-time"`, `"manual"`)
	e.Must("apply", "-auto-approve")
	u, ok := e.storedUpdate("os")
	if !ok || u.Spec.Version != "0.5.0" || !u.Spec.AllNodes || u.Spec.Approval != api.ApprovalManual || u.Spec.Strategy != api.StrategyOneAtATime {
		t.Fatalf("after create the controller stores %+v (stored %v)", u.Spec, ok)
	}
	if out, code := e.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan right after create: exit %d, want 0 (no changes)\n%s", code, out)
	}

	// Update: a batched strategy, changed in place with its diff planned.
	e.write(updateBlock("os", "  all_nodes  = true\n  strategy   = \"batched\"\n  batch_size = 2\n"))
	out = e.Must("plan")
	mustContain(t, "update plan", out, "update in-place", "update update os", "spec.strategy", "spec.batchSize")
	e.Must("apply", "-auto-approve")
	if u, _ = e.storedUpdate("os"); u.Spec.Strategy != api.StrategyBatched || u.Spec.BatchSize != 2 {
		t.Fatalf("after update the controller stores %+v", u.Spec)
	}
	if out, code := e.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan right after update: exit %d, want 0 (no changes)\n%s", code, out)
	}

	// Import: a ClusterUpdate stored by kctl is adopted, and its
	// configuration then plans no change.
	k8s := api.ClusterUpdate{Kind: api.KindClusterUpdate, Metadata: api.ObjectMeta{Name: "k8s"},
		Spec: api.UpdateSpec{Version: "1.37.2", UpdateKind: api.UpdateKindK8s, Nodes: []string{"node-201", "node-202"}}}
	e.applyUpdateDirect(k8s)
	k8sCfg := `
resource "kcore_cluster_update" "k8s" {
  name        = "k8s"
  version     = "1.37.2"
  update_kind = "kubernetes"
  nodes       = ["node-201", "node-202"]
}
`
	e.write(updateBlock("os", "  all_nodes  = true\n  strategy   = \"batched\"\n  batch_size = 2\n") + k8sCfg)
	e.Must("import", "kcore_cluster_update.k8s", "k8s")
	mustContain(t, "imported state", e.Must("state", "show", "kcore_cluster_update.k8s"), `"kubernetes"`, `"node-202"`)
	if out, code := e.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after import: exit %d, want 0 (no changes)\n%s", code, out)
	}

	// Destroy: the plan names the removals, and both are gone.
	out = e.Must("plan", "-destroy")
	mustContain(t, "destroy plan", out, "kcore plan: delete os", "delete update os", "kcore plan: delete k8s")
	e.Must("destroy", "-auto-approve")
	for _, name := range []string{"os", "k8s"} {
		if u, ok := e.storedUpdate(name); ok {
			t.Fatalf("after destroy the controller still stores %s: %+v", name, u)
		}
	}
	if s := strings.TrimSpace(e.Must("state", "list")); s != "" {
		t.Fatalf("state after destroy still lists:\n%s", s)
	}
}
