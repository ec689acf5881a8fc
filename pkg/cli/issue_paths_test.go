package cli

import (
	"bytes"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/pkg/plan"
	"kcore.dev/kcore/pkg/rollout"
)

// TestPlanIssuesNameHCLFieldsAsWritten checks that plan issues about
// documents read from HCL name the attribute as written there and where it
// is, that YAML documents keep their field paths, and that the plan itself
// (which a saved plan and its hash hold) is left as the controller sent it.
func TestPlanIssuesNameHCLFieldsAsWritten(t *testing.T) {
	hcl := `resource "kcore_kubernetes_cluster" "lab" {
  cluster_cidr = "10.244.0.0/16"
  control_plane_node {
    node_id           = "node-105"
    advertise_address = "192.168.40.105"
  }
}
resource "kcore_cluster_update" "u" {
  version               = "0.5.0"
  min_compatible_reader = 60
}
`
	yaml := "kind: KubernetesCluster\nmetadata:\n  name: other\nspec:\n  clusterCidr: 10.244.0.0/16\n"
	hdocs, ds := manifest.ParseHCL("c.hcl", []byte(hcl))
	ydocs, yds := manifest.ParseYAML("o.yaml", []byte(yaml))
	if ds.HasErrors() || yds.HasErrors() {
		t.Fatalf("parse: %v %v", ds, yds)
	}
	resp := &apiv1.PlanResponse{
		Plan: &plan.Plan{Blocking: []plan.Issue{
			{Code: "x", Cluster: "lab", Path: "spec.controlPlaneNodes[0].advertiseAddress", Message: "m1"},
			{Code: "y", Cluster: "other", Path: "spec.clusterCidr", Message: "m2"},
		}},
		Updates: []apiv1.UpdatePlan{{Name: "u", Action: apiv1.UpdateCreate, Rollout: &rollout.RolloutPlan{
			Blocking: []plan.Issue{{Code: "schema-gate", Path: "spec.minCompatibleReader", Message: "m3"}},
		}}},
	}
	got := locateIssues(append(hdocs, ydocs...), resp)
	var out bytes.Buffer
	if err := plan.WriteText(&out, got.Plan, false); err != nil {
		t.Fatal(err)
	}
	if err := rollout.WriteText(&out, got.Updates[0].Rollout, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"path control_plane_nodes[0].advertise_address at c.hcl:5:5",
		"path spec.clusterCidr",
		"path min_compatible_reader at c.hcl:10:3",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
	if resp.Plan.Blocking[0].Path != "spec.controlPlaneNodes[0].advertiseAddress" || resp.Updates[0].Rollout.Blocking[0].Path != "spec.minCompatibleReader" {
		t.Errorf("locateIssues changed the controller's plan: %+v", resp)
	}
}
