package manifest

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

const hclCluster = `resource "kcore_kubernetes_cluster" "lab" {
  cluster_cidr        = "10.244.0.0/16"
  service_cidr        = "10.96.0.0/12"
  api_server_endpoint = "192.168.40.105:6443"
  schedule_on_control_plane = true
  control_plane_node {
    node_id           = "node-105"
    advertise_address = "192.168.40.105"
  }
}
`

func TestParseHCLDiagnostics(t *testing.T) {
	tests := []struct {
		name, src, want string
		docs            int
	}{
		{name: "valid", src: hclCluster, docs: 1},
		{
			name: "unknown attribute with suggestion",
			src:  strings.Replace(hclCluster, "service_cidr ", "servce_cidr  ", 1),
			want: `c.hcl:3:3: unknown attribute "servce_cidr", did you mean "service_cidr"?` + "\n",
			docs: 1,
		},
		{
			name: "camel case suggests snake case",
			src:  strings.Replace(hclCluster, "node_id ", "nodeId  ", 1),
			want: `c.hcl:7:5: control_plane_nodes[0]: unknown attribute "nodeId", did you mean "node_id"?` + "\n",
			docs: 1,
		},
		{
			name: "unknown block with suggestion",
			src:  strings.Replace(hclCluster, "control_plane_node {", "control_plane_nodes {", 1),
			want: `c.hcl:6:3: unknown block "control_plane_nodes", did you mean "control_plane_node"?` + "\n",
			docs: 1,
		},
		{
			name: "block written as attribute",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium = {}\n  control_plane_node {", 1),
			want: "c.hcl:6:3: cilium: cilium is a block: write cilium { … }\n",
			docs: 1,
		},
		{
			name: "attribute written as block",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cni {}\n  control_plane_node {", 1),
			want: "c.hcl:6:3: cni: cni is an attribute: write cni = …\n",
			docs: 1,
		},
		{
			name: "duplicate single block",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium {}\n  cilium {}\n  control_plane_node {", 1),
			want: "c.hcl:7:3: cilium: duplicate block cilium (first at line 6)\n",
			docs: 1,
		},
		{
			name: "block labels",
			src:  strings.Replace(hclCluster, "control_plane_node {", `control_plane_node "x" {`, 1),
			want: "c.hcl:6:22: control_plane_nodes: block control_plane_node takes no labels\n",
			docs: 1,
		},
		{
			name: "wrong types",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium {\n    mtu = \"fast\"\n    load_balancer_ip_pools = \"x\"\n  }\n  control_plane_node {", 1),
			want: `c.hcl:7:5: cilium.mtu: expected an integer, got the string "fast"
c.hcl:8:5: cilium.load_balancer_ip_pools: expected a list, got the string "x"
`,
			docs: 1,
		},
		{
			name: "fractional integer",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium {\n    mtu = 1.5\n  }\n  control_plane_node {", 1),
			want: "c.hcl:7:5: cilium.mtu: expected an integer in range, got 1.5\n",
			docs: 1,
		},
		{
			name: "huge number is described, not printed",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium {\n    mtu = 10737e4182400\n  }\n  control_plane_node {", 1),
			want: "c.hcl:7:11: number 10737e4182400 is out of range\n",
		},
		{
			name: "large number is described, not printed",
			src:  strings.Replace(hclCluster, "  control_plane_node {", "  cilium {\n    mtu = 1e1000\n  }\n  control_plane_node {", 1),
			want: "c.hcl:7:5: cilium.mtu: expected an integer in range, got a number of magnitude 2^3322\n",
			docs: 1,
		},
		{
			name: "huge number in a template",
			src:  strings.Replace(hclCluster, `"10.96.0.0/12"`, `"${1e99999999}"`, 1),
			want: "c.hcl:3:28: number 1e99999999 is out of range\n",
		},
		{
			name: "variables are not allowed",
			src:  strings.Replace(hclCluster, `"10.96.0.0/12"`, "var.svc", 1),
			want: "c.hcl:3:25: Variables not allowed: Variables may not be used here.\n",
			docs: 1,
		},
		{
			name: "unknown resource type",
			src:  strings.Replace(hclCluster, "kcore_kubernetes_cluster", "kcore_kubernetes_clusters", 1),
			want: `c.hcl:1:10: unknown resource type "kcore_kubernetes_clusters", did you mean "kcore_kubernetes_cluster"?` + "\n",
		},
		{
			name: "unknown resource type far away lists accepted",
			src:  `resource "aws_instance" "x" {}`,
			want: `c.hcl:1:10: unknown resource type "aws_instance", expected one of kcore_kubernetes_cluster, kcore_cluster_update` + "\n",
		},
		{
			name: "other top-level blocks and attributes",
			src:  "x = 1\nprovider \"kcore\" {}\nresource \"kcore_cluster_update\" {}\n",
			want: `c.hcl:1:1: unexpected attribute "x": a manifest holds only resource blocks
c.hcl:2:1: unsupported block type "provider": a manifest holds only resource blocks
c.hcl:3:1: a resource block has two labels, its type and its name, e.g. resource "kcore_kubernetes_cluster" "lab"
`,
		},
		{
			name: "syntax error keeps line and column",
			src:  "resource \"kcore_cluster_update\" \"u\" {\n  version = \n}\n",
			want: "c.hcl:2:13: Invalid expression: Expected the start of an expression, but found an invalid expression token.\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, ds := ParseHCL("c.hcl", []byte(tt.src))
			if got := diagStrings(ds); got != tt.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tt.want)
			}
			if len(docs) != tt.docs {
				t.Errorf("got %d documents, want %d", len(docs), tt.docs)
			}
		})
	}
}

func TestParseHCLNameAndPositions(t *testing.T) {
	src := `resource "kcore_cluster_update" "os" {
  name    = "release-0-5-0"
  version = "0.5.0"
  nodes   = ["a",
             "b"]
  labels  = { zone = "x" }
  tested_os_pins {
    kubernetes_version = "1.37.0"
  }
}
resource "kcore_cluster_update" "by-label" {
  version = 1
}
`
	docs, ds := ParseHCL("u.hcl", []byte(src))
	if len(ds) != 0 || len(docs) != 2 {
		t.Fatalf("docs %d, diagnostics:\n%s", len(docs), diagStrings(ds))
	}
	u := docs[0].Object.(*api.ClusterUpdate)
	if docs[0].Name != "release-0-5-0" || u.Metadata.Name != "release-0-5-0" || u.Metadata.Labels["zone"] != "x" ||
		!reflect.DeepEqual(u.Spec.Nodes, []string{"a", "b"}) || u.Spec.TestedOSPins.KubernetesVersion != "1.37.0" || u.Kind != api.KindClusterUpdate {
		t.Errorf("first update = %+v", u)
	}
	if u2 := docs[1].Object.(*api.ClusterUpdate); docs[1].Name != "by-label" || u2.Spec.Version != "1" {
		t.Errorf("second update = %+v", u2)
	}
	for path, want := range map[string]Pos{
		"":                                    {"u.hcl", 1, 1},
		"metadata.name":                       {"u.hcl", 2, 3},
		"spec.nodes[1]":                       {"u.hcl", 5, 14},
		"spec.testedOsPins":                   {"u.hcl", 7, 3},
		"spec.testedOsPins.kubernetesVersion": {"u.hcl", 8, 5},
		"spec.testedOsPins.cephRev":           {"u.hcl", 7, 3},
		"spec.strategy":                       {"u.hcl", 1, 1},
	} {
		if got := docs[0].PosOf(path); got != want {
			t.Errorf("PosOf(%q) = %v, want %v", path, got, want)
		}
	}
	if got := docs[1].PosOf("metadata.name"); got != (Pos{"u.hcl", 11, 33}) {
		t.Errorf("label name at %v", got)
	}
}

// TestHCLMatchesYAML reads the same cluster written in both formats: the
// objects are equal and every field path has a position in both, so
// diagnostics read the same whichever format was used.
func TestHCLMatchesYAML(t *testing.T) {
	read := func(file string) *Document {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		docs, ds := Parse(file, data)
		if len(ds) != 0 || len(docs) != 1 {
			t.Fatalf("%s: %d docs, diagnostics:\n%s", file, len(docs), diagStrings(ds))
		}
		return docs[0]
	}
	y, h := read("testdata/equivalent/cluster.yaml"), read("testdata/equivalent/cluster.hcl")
	yc, hc := y.Object.(*api.KubernetesCluster), h.Object.(*api.KubernetesCluster)
	if !reflect.DeepEqual(yc, hc) {
		t.Errorf("objects differ:\nyaml %+v\nhcl  %+v", yc, hc)
	}
	for p := range y.positions {
		if _, ok := h.positions[p]; !ok && p != "apiVersion" {
			t.Errorf("path %s has a position in YAML but not in HCL", p)
		}
	}
	for p := range h.positions {
		if _, ok := y.positions[p]; !ok {
			t.Errorf("path %s has a position in HCL but not in YAML", p)
		}
	}
}

// TestHCLDiskVolume reads a whole-disk volume with its snake_case
// attribute names, as the YAML reader reads disk and storageClass.
func TestHCLDiskVolume(t *testing.T) {
	src := `resource "kcore_kubernetes_cluster" "lab" {
  api_server_endpoint = "10.77.0.100:6444"
  control_plane_node {
    node_id           = "lab-n1"
    advertise_address = "10.77.0.11"
  }
  local_provisioner {
    enabled = true
    volume {
      name          = "data"
      node_id       = "lab-n1"
      storage_class = "disk"
      disk          = "/dev/disk/by-id/kcore-lab-n1"
      fs_type       = "xfs"
    }
  }
}
`
	docs, ds := ParseHCL("c.hcl", []byte(src))
	if len(ds) != 0 || len(docs) != 1 {
		t.Fatalf("docs %d, diagnostics:\n%s", len(docs), diagStrings(ds))
	}
	c := docs[0].Object.(*api.KubernetesCluster)
	v := c.Spec.LocalProvisioner.Volumes
	if len(v) != 1 || v[0].StorageClass != api.StorageClassDisk || v[0].Disk != "/dev/disk/by-id/kcore-lab-n1" || v[0].SizeBytes != 0 {
		t.Fatalf("volumes = %+v", v)
	}
	if got := docs[0].PosOf("spec.localProvisioner.volumes[0].disk"); got != (Pos{"c.hcl", 13, 7}) {
		t.Errorf("disk at %v", got)
	}
}
