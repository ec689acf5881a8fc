package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
)

func TestGetListHealth(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	a.setStatus("lab", api.ClusterStatus{
		Phase: api.PhaseDegraded, LastHealthCheck: "2026-11-29T21:00:00Z",
		Conditions: []api.Condition{{Type: "APIServerHealthy", Status: "False", Reason: "Unreachable", Since: "2026-11-29T20:59:30Z"}},
		Nodes: []api.NodeStatus{
			{NodeID: "node-105", Role: api.RoleControlPlane, Ready: true},
			{NodeID: "node-107", Role: api.RoleControlPlane, Ready: false, Message: "kube-apiserver down"},
			{NodeID: "node-103", Role: api.RoleWorker, Ready: true},
		},
	})
	rep := api.NodeReport{NodeID: "node-107", Cluster: "lab", ObservedGeneration: 1, Items: []api.ItemStatus{{Kind: "unit", Name: "kube-apiserver", State: api.ItemFailed, Message: "exit 1"}}}
	if _, err := a.admin.Put(t.Context(), apiv1.KindNodeReport, "lab/node-107", rep, nil); err != nil {
		t.Fatal(err)
	}

	list := a.must("kubernetes", "list")
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "NAME") {
		t.Fatalf("list:\n%s", list)
	}
	if f := strings.Fields(rows[1]); len(f) != 6 || f[0] != "lab" || f[1] != "degraded" || f[2] != "192.168.40.200:6443" || f[3] != "1/2" || f[4] != "1/1" {
		t.Fatalf("list row %q", rows[1])
	}

	get := a.must("kubernetes", "get", "lab")
	for _, want := range []string{"Phase:           degraded", "node-107 192.168.40.107 on enp6s0 (not ready: kube-apiserver down)", "APIServerHealthy=False Unreachable"} {
		if !strings.Contains(get, want) {
			t.Errorf("get lacks %q:\n%s", want, get)
		}
	}
	var kc api.KubernetesCluster
	if err := json.Unmarshal([]byte(a.must("kubernetes", "get", "lab", "-o", "json")), &kc); err != nil || kc.Metadata.Name != "lab" {
		t.Fatalf("get -o json: %v %+v", err, kc.Metadata)
	}
	if y := a.must("kubernetes", "get", "lab", "-o", "yaml"); !strings.Contains(y, "apiServerEndpoint: 192.168.40.200:6443") {
		t.Fatalf("get -o yaml:\n%s", y)
	}

	out, _, err := a.runIn(strings.NewReader(""), "kubernetes", "health", "lab")
	if ExitCode(err) != 1 {
		t.Fatalf("health of a degraded cluster = %v, want exit 1", err)
	}
	for _, want := range []string{"phase degraded", "APIServerHealthy", "node-107", "unit kube-apiserver", "failed", "exit 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("health lacks %q:\n%s", want, out)
		}
	}
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady})
	if _, _, err := a.runIn(strings.NewReader(""), "kubernetes", "health", "lab"); err != nil {
		t.Fatalf("health of a ready cluster = %v", err)
	}
}

func TestScale(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady})
	a.putNode("node-109", "192.168.40.109", true)
	a.must("cert", "issue", "--role", "operator", "--name", "olga")

	out := a.must("--context", "olga@lab", "kubernetes", "scale", "lab", "--add-control-plane", "node-109:192.168.40.109", "--yes")
	if !strings.Contains(out, `cluster "lab": stored, phase scaling`) {
		t.Fatalf("scale:\n%s", out)
	}
	kc, _ := a.cluster("lab")
	if len(kc.Spec.ControlPlaneNodes) != 3 || kc.Spec.ControlPlaneNodes[2].Iface != "enp6s0" || kc.Metadata.Generation != 2 {
		t.Fatalf("scaled cluster = %+v", kc.Spec.ControlPlaneNodes)
	}
	// An operator may scale but not apply a manifest.
	if _, _, err := a.runIn(strings.NewReader(""), "--context", "olga@lab", "kubernetes", "apply", "-f", a.write("edge.yaml", edgeManifest), "--yes"); err == nil {
		t.Fatal("operator applied a KubernetesCluster")
	}
	tests := []struct {
		in      []string
		wantErr string
	}{
		{[]string{"x"}, "want id:address"},
		{[]string{"a:b:c:d"}, "want id:address"},
	}
	for _, tt := range tests {
		if _, err := parseMembers(tt.in); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseMembers(%q) = %v", tt.in, err)
		}
	}
	if m, err := parseMembers([]string{"n1:10.0.0.1:eno1"}); err != nil || m[0].Iface != "eno1" {
		t.Errorf("parseMembers with iface = %+v, %v", m, err)
	}
}
