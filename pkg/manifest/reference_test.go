package manifest

import (
	"os"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// The reference's manifest and kcore_cluster_update block, copied verbatim
// into testdata/reference, parse, default and validate.

func TestReferenceCluster(t *testing.T) {
	docs, ds := ReadPath("testdata/reference/cluster.yaml")
	if len(ds) != 0 || len(docs) != 1 {
		t.Fatalf("%d docs, diagnostics:\n%s", len(docs), diagStrings(ds))
	}
	check := Check(docs)
	if check.HasErrors() {
		t.Fatalf("errors:\n%s", diagStrings(check))
	}
	want := `testdata/reference/cluster.yaml:16: warning: spec.cilium.loadBalancerIpPools[0]: "192.168.40.220/29" has host bits set: the pool is all of 192.168.40.216/29
testdata/reference/cluster.yaml:17: warning: spec.controlPlaneNodes: 2 control-plane nodes tolerate no more failures than 1; use an odd number
`
	if got := diagStrings(check); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
	c := docs[0].Object.(*api.KubernetesCluster)
	if c.Metadata.Name != "lab" || c.Spec.CNI != api.CNICilium || len(c.Spec.ControlPlaneNodes) != 2 || len(c.Spec.WorkerNodes) != 1 ||
		c.Spec.LocalProvisioner.Volumes[2].Role != api.VolumeRoleFilesystem || c.Spec.LocalProvisioner.Volumes[2].MountPath != "/mnt/kcore/lab/kcore-kdata" ||
		!c.Spec.HighAvailability.HealthCheckEnabled() {
		t.Errorf("defaulted cluster = %+v", c.Spec)
	}
}

func TestReferenceUpdate(t *testing.T) {
	data, err := os.ReadFile("testdata/reference/update.hcl")
	if err != nil {
		t.Fatal(err)
	}
	docs, ds := Parse("update.hcl", data)
	if len(ds) != 0 || len(docs) != 1 {
		t.Fatalf("%d docs, diagnostics:\n%s", len(docs), diagStrings(ds))
	}
	want := `update.hcl:5:3: flake_rev: "<full-git-sha>" is not a full git SHA (40 lowercase hex characters)
update.hcl:6:3: nixpkgs_rev: "<nixpkgs-rev>" is not a full git SHA (40 lowercase hex characters)
update.hcl:21:5: tested_os_pins.nixpkgs_rev: "<nixpkgs-rev>" is not a full git SHA (40 lowercase hex characters)
update.hcl:22:5: tested_os_pins.ceph_rev: "<ceph-rev>" is not a full git SHA (40 lowercase hex characters)
update.hcl:23:5: tested_os_pins.ceph_sha256: "<ceph-sha256>" is not a SHA-256 (64 hex characters or sha256-<base64>)
`
	if got := diagStrings(Check(docs)); got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
	u := docs[0].Object.(*api.ClusterUpdate)
	if docs[0].Name != "release-0-5-0" || u.Spec.SchemaVersion != 59 || u.Spec.PreviousSchemaVersion != 56 || !u.Spec.AllNodes ||
		u.Spec.TestedOSPins.KubernetesVersion != "1.37.0" || u.Spec.Approval != api.ApprovalManual {
		t.Errorf("update = %+v", u.Spec)
	}

	real := strings.NewReplacer(
		"<full-git-sha>", "3f9c2a7e4b1d8c6f0a5e2d9b7c4a1f8e6d3b0c95",
		"<nixpkgs-rev>", "a71323f68d4377d12c04a5410e214495ec598d4c",
		"<ceph-rev>", "5dd24139a1eada541a3bc16b6941c5dde975e26d",
		"<ceph-sha256>", "0c6f2e4a9b8d1f3e5a7c9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a3c5b7d9f2e",
	).Replace(string(data))
	docs, ds = Parse("update.hcl", []byte(real))
	if all := append(ds, Check(docs)...); len(all) != 0 || len(docs) != 1 {
		t.Errorf("with real revisions: %d docs, diagnostics:\n%s", len(docs), diagStrings(all))
	}
}

// TestExamples: every example reads and validates without errors.
func TestExamples(t *testing.T) {
	docs, ds := ReadPath("../../examples")
	ds = append(ds, Check(docs)...)
	if ds.HasErrors() {
		t.Fatalf("errors:\n%s", diagStrings(ds))
	}
	kinds := map[string]int{}
	for _, d := range docs {
		kinds[d.Kind+"/"+d.Format]++
	}
	if kinds["KubernetesCluster/yaml"] != 4 || kinds["KubernetesCluster/hcl"] != 1 || kinds["ClusterUpdate/hcl"] != 1 {
		t.Errorf("examples hold %v", kinds)
	}
}
