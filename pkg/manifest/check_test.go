package manifest

import (
	"strings"
	"testing"
)

func TestCheckPositionsIssues(t *testing.T) {
	src := yamlCluster + `  highAvailability:
    enabled: true
  workerNodes:
    - nodeId: node-105
      advertiseAddress: 192.168.40.106
      iface: "a/b"
`
	docs, ds := ParseYAML("c.yaml", []byte(src))
	if len(ds) != 0 {
		t.Fatalf("parse:\n%s", diagStrings(ds))
	}
	want := `c.yaml:12: spec.highAvailability.vipAddress: required when highAvailability.enabled is true
c.yaml:12: spec.highAvailability.vipInterface: required when highAvailability.enabled is true
c.yaml:15: spec.workerNodes[0].nodeId: duplicate node id "node-105" (also spec.controlPlaneNodes[0])
c.yaml:17: spec.workerNodes[0].iface: "a/b" is not a valid Linux interface name (1 to 15 characters, no '/', ':' or spaces)
`
	got := Check(docs)
	if diagStrings(got) != want {
		t.Errorf("check:\n%s\nwant:\n%s", diagStrings(got), want)
	}
	if !got.HasErrors() || got.Err() == nil || len(got.Warnings()) != 0 || len(got.Errors()) != 4 {
		t.Errorf("HasErrors/Err/Warnings/Errors disagree on %v", got)
	}
	if !strings.Contains(got.Error(), "\nc.yaml:15: spec.workerNodes[0].nodeId") {
		t.Errorf("Error() = %q", got.Error())
	}
}

// TestCheckHCLNamesFieldsAsWritten checks that a finding in an HCL manifest
// names the attribute or block the author wrote, at its file:line:column,
// also for a field inside a block that is not written.
func TestCheckHCLNamesFieldsAsWritten(t *testing.T) {
	src := strings.Replace(hclCluster, "  control_plane_node {", `  high_availability {
    enabled = true
  }
  control_plane_node {
    node_id           = "node-106"
    advertise_address = "192.168.40.106"
  }
  worker_node {
    node_id           = "node-107"
    advertise_address = "192.168.40.107"
    iface             = "a/b"
  }
  control_plane_node {`, 1)
	src = strings.Replace(src, `advertise_address = "192.168.40.105"`, `advertise_address = "not-an-ip"`, 1)
	docs, ds := ParseHCL("c.hcl", []byte(src))
	if len(ds) != 0 {
		t.Fatalf("parse:\n%s", diagStrings(ds))
	}
	got := diagStrings(Check(docs))
	for _, want := range []string{
		"c.hcl:6:3: high_availability.vip_address: required when",
		"c.hcl:20:5: control_plane_nodes[1].advertise_address: ",
		"c.hcl:16:5: worker_nodes[0].iface: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check:\n%s\nwant a line with %q", got, want)
		}
	}
	if strings.Contains(got, "spec.") {
		t.Errorf("check names a YAML field path:\n%s", got)
	}
}

func TestFieldPath(t *testing.T) {
	tests := []struct{ kind, format, in, want string }{
		{"KubernetesCluster", FormatHCL, "spec.minCompatibleReader", "spec.minCompatibleReader"},
		{"ClusterUpdate", FormatHCL, "spec.minCompatibleReader", "min_compatible_reader"},
		{"ClusterUpdate", FormatYAML, "spec.minCompatibleReader", "spec.minCompatibleReader"},
		{"KubernetesCluster", FormatHCL, "metadata.name", "name"},
		{"KubernetesCluster", FormatHCL, "metadata.labels.kcore.dev/tier", "labels.kcore.dev/tier"},
		{"KubernetesCluster", FormatHCL, "spec", ""},
		{"KubernetesCluster", FormatHCL, "spec.controlPlaneNodes", "control_plane_nodes"},
		{"KubernetesCluster", FormatHCL, "spec.controlPlaneNodes[2].advertiseAddress", "control_plane_nodes[2].advertise_address"},
		{"KubernetesCluster", FormatHCL, "spec.localProvisioner.volumes[0].sizeBytes", "local_provisioner.volumes[0].size_bytes"},
		{"KubernetesCluster", FormatHCL, "spec.etcdBackup.maxAge", "etcd_backup.max_age"},
		{"KubernetesCluster", FormatHCL, "spec.cilium.loadBalancerIpPools[1]", "cilium.load_balancer_ip_pools[1]"},
		{"KubernetesCluster", FormatHCL, "spec.apiServer.extraArgs.audit-log-path", "api_server.extra_args.audit-log-path"},
		{"KubernetesCluster", FormatHCL, "spec.noSuchField", "spec.noSuchField"},
	}
	for _, tt := range tests {
		d := &Document{Kind: tt.kind, Format: tt.format}
		if got := d.FieldPath(tt.in); got != tt.want {
			t.Errorf("%s %s FieldPath(%q) = %q, want %q", tt.format, tt.kind, tt.in, got, tt.want)
		}
	}
}
