package cli

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// TestReplace: an operator replaces a dead control plane of a
// three-control-plane cluster in one plan; replacing a healthy one while
// another is dead is refused.
func TestReplace(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady})
	a.putNode("node-109", "192.168.40.109", true)
	a.must("kubernetes", "scale", "lab", "--add-control-plane", "node-109:192.168.40.109", "--yes")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseDegraded})
	a.putNode("node-107", "192.168.40.107", false)
	a.putNode("node-111", "192.168.40.111", true)
	a.must("cert", "issue", "--role", "operator", "--name", "olga")

	out, _, err := a.runIn(strings.NewReader(""), "--context", "olga@lab", "kubernetes", "replace", "lab", "--node", "node-105", "--with", "node-111:192.168.40.111", "--yes")
	if ExitCode(err) != 1 || !strings.Contains(out, "quorum-loss") {
		t.Fatalf("replacing a healthy member while node-107 is down = %v:\n%s", err, out)
	}

	out = a.must("--context", "olga@lab", "kubernetes", "replace", "lab", "--node", "node-107", "--with", "node-111:192.168.40.111", "--yes")
	for _, want := range []string{"remove-member", "add-member", "promote-member", `cluster "lab": stored, phase scaling`} {
		i := strings.Index(out, want)
		if i < 0 {
			t.Fatalf("replace output lacks %q:\n%s", want, out)
		}
		out = out[i:]
	}
	kc, _ := a.cluster("lab")
	var ids []string
	for _, n := range kc.Spec.ControlPlaneNodes {
		ids = append(ids, n.NodeID)
	}
	if want := []string{"node-105", "node-111", "node-109"}; !slices.Equal(ids, want) || kc.Spec.ControlPlaneNodes[1].Iface != "enp6s0" {
		t.Errorf("control planes after replace = %v, want %v in place", kc.Spec.ControlPlaneNodes, want)
	}

	if _, _, err := a.runIn(strings.NewReader(""), "kubernetes", "replace", "lab", "--node", "node-109"); !errors.Is(err, errReplaceFlags) {
		t.Errorf("replace without --with = %v, want errReplaceFlags", err)
	}
}
