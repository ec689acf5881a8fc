package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestApplyClusterUpdates(t *testing.T) {
	a := newApplyEnv(t)
	hcl := a.write("release.hcl", updateHCL)
	lab := a.write("lab.yaml", labManifest(t))

	before := a.index()
	_, _, err := a.runIn(strings.NewReader(""), "apply", "-f", lab, "--yes")
	if err == nil || !strings.Contains(err.Error(), "kctl kubernetes apply") {
		t.Fatalf("kctl apply of a KubernetesCluster = %v, want a refusal naming kctl kubernetes apply", err)
	}
	if a.index() != before {
		t.Fatal("refused apply moved the index")
	}

	out, _, err := a.runIn(answer("yes\n"), "apply", "-f", hcl)
	if err != nil {
		t.Fatalf("kctl apply: %v\n%s", err, out)
	}
	if !strings.Contains(out, `+ create ClusterUpdate "release-0-5-0"`) || !strings.Contains(out, `ClusterUpdate "release-0-5-0": stored`) ||
		!strings.Contains(out, "release 0.5.0") || !strings.Contains(out, "approval: manual") {
		t.Fatalf("kctl apply output:\n%s", out)
	}
	u := a.update("release-0-5-0")
	if u.Status.Phase != "pending" || u.Spec.Version != "0.5.0" {
		t.Fatalf("stored update = %+v", u)
	}

	// Unchanged: no changes, nothing written.
	before = a.index()
	out = a.must("apply", "-f", hcl)
	if !strings.Contains(out, "No changes.") || a.index() != before {
		t.Fatalf("unchanged kctl apply:\n%s", out)
	}

	// A changed field shows its diff and keeps the status.
	yaml := a.write("u.yaml", "kind: ClusterUpdate\nmetadata:\n  name: release-0-5-0\nspec:\n  version: 0.5.1\n  allNodes: true\n")
	out = a.must("apply", "-f", yaml, "--yes")
	if !strings.Contains(out, `~ spec.version: "0.5.0" → "0.5.1"`) {
		t.Fatalf("update diff:\n%s", out)
	}

	// An operator steers it: approve, pause, resume, rollback.
	a.must("cert", "issue", "--role", "operator", "--name", "olga")
	for _, step := range []struct{ cmd, phase string }{
		{"approve", "approved"}, {"pause", "paused"}, {"resume", "approved"}, {"pause", "paused"}, {"rollback", "rolling-back"},
	} {
		out := a.must("--context", "olga@lab", "update", step.cmd, "release-0-5-0")
		if got := a.update("release-0-5-0"); got.Status.Phase != step.phase || !strings.Contains(out, "→ "+step.phase) {
			t.Fatalf("update %s: phase %q, output %q", step.cmd, got.Status.Phase, out)
		}
	}
	if !a.update("release-0-5-0").Spec.Approve {
		t.Fatal("approve did not set spec.approve")
	}
	if _, _, err := a.runIn(strings.NewReader(""), "update", "resume", "release-0-5-0"); err == nil {
		t.Fatal("resume of an update rolling back was accepted")
	}
	if out := a.must("update", "status", "release-0-5-0"); !strings.Contains(out, "rolling-back") {
		t.Fatalf("status:\n%s", out)
	}

	// Rolling back, it cannot be removed; a new pending one can, by an
	// operator, after the plan.
	before = a.index()
	if out, _, err := a.runIn(strings.NewReader(""), "--context", "olga@lab", "update", "delete", "release-0-5-0", "--yes"); err == nil || !strings.Contains(out, "update-in-progress") || a.index() != before {
		t.Fatalf("delete of an update rolling back = %v:\n%s", err, out)
	}
	other := a.write("other.yaml", "kind: ClusterUpdate\nmetadata:\n  name: other\nspec:\n  version: 0.6.0\n  allNodes: true\n")
	a.must("apply", "-f", other, "--yes")
	out, _, err = a.runIn(answer("yes\n"), "--context", "olga@lab", "update", "delete", "other")
	if err != nil || !strings.Contains(out, `- delete ClusterUpdate "other"`) || !strings.Contains(out, `ClusterUpdate "other": removed`) {
		t.Fatalf("kctl update delete = %v:\n%s", err, out)
	}
	if _, ok := a.ctl.Node().State().Get(api.KindClusterUpdate, "other"); ok {
		t.Fatal("kctl update delete left the update stored")
	}
}

func (a *applyEnv) update(name string) *api.ClusterUpdate {
	a.t.Helper()
	o, ok := a.ctl.Node().State().Get(api.KindClusterUpdate, name)
	if !ok {
		a.t.Fatalf("ClusterUpdate %s not stored", name)
	}
	var u api.ClusterUpdate
	if err := json.Unmarshal(o.Data, &u); err != nil {
		a.t.Fatal(err)
	}
	return &u
}

// updateHCL is the reference's ClusterUpdate with real revisions.
const updateHCL = `resource "kcore_cluster_update" "os" {
  name                    = "release-0-5-0"
  version                 = "0.5.0"
  flake_ref               = "github:kcorehypervisor/kcore"
  flake_rev               = "0123456789abcdef0123456789abcdef01234567"
  all_nodes               = true
  strategy                = "one-at-a-time"
  max_unavailable         = 1
  batch_size              = 1
  activation              = "auto"
  update_kind             = "kcore"
  approval                = "manual"
  approve                 = false
}
`
