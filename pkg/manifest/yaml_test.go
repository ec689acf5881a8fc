package manifest

import (
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// yamlCluster is a valid cluster the cases below start from.
const yamlCluster = `kind: KubernetesCluster
metadata:
  name: lab
spec:
  clusterCidr: 10.244.0.0/16
  serviceCidr: 10.96.0.0/12
  apiServerEndpoint: 192.168.40.105:6443
  controlPlaneNodes:
    - nodeId: node-105
      advertiseAddress: 192.168.40.105
  scheduleOnControlPlane: true
`

func diagStrings(ds Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestParseYAMLDiagnostics(t *testing.T) {
	tests := []struct {
		name, src, want string
		docs            int
	}{
		{name: "valid", src: yamlCluster, docs: 1},
		{
			name: "unknown field with suggestion",
			src:  strings.Replace(yamlCluster, "  scheduleOnControlPlane", "  scheduleOnControlPlan", 1),
			want: `c.yaml:11: spec: unknown field "scheduleOnControlPlan", did you mean "scheduleOnControlPlane"?` + "\n",
			docs: 1,
		},
		{
			name: "snake case suggests camel case",
			src:  strings.Replace(yamlCluster, "clusterCidr", "cluster_cidr", 1),
			want: `c.yaml:5: spec: unknown field "cluster_cidr", did you mean "clusterCidr"?` + "\n",
			docs: 1,
		},
		{
			name: "unknown field without suggestion lists the allowed ones",
			src:  strings.Replace(yamlCluster, "      advertiseAddress", "      zzz: 1\n      advertiseAddress", 1),
			want: `c.yaml:10: spec.controlPlaneNodes[0]: unknown field "zzz", expected one of nodeId, advertiseAddress, iface` + "\n",
			docs: 1,
		},
		{
			name: "wrong types",
			src:  yamlCluster + "  cilium:\n    mtu: fast\n    autoDirectNodeRoutes: maybe\n    loadBalancerIpPools: 10.0.0.0/24\n  workerNodes: {a: b}\n",
			want: `c.yaml:13: spec.cilium.mtu: expected an integer, got the string "fast"
c.yaml:14: spec.cilium.autoDirectNodeRoutes: expected true or false, got the string "maybe"
c.yaml:15: spec.cilium.loadBalancerIpPools: expected a list, got the string "10.0.0.0/24"
c.yaml:16: spec.workerNodes: expected a list, got a mapping
`,
			docs: 1,
		},
		{
			name: "string field given a mapping",
			src:  strings.Replace(yamlCluster, "name: lab", "name: {a: 1}", 1),
			want: "c.yaml:3: metadata.name: expected a string, got a mapping\n",
			docs: 1,
		},
		{
			name: "integer out of range",
			src:  yamlCluster + "  cilium:\n    mtu: 99999999999999999999\n",
			want: "c.yaml:13: spec.cilium.mtu: expected an integer, got 99999999999999999999\n",
			docs: 1,
		},
		{
			name: "duplicate field",
			src:  yamlCluster + "  clusterCidr: 10.1.0.0/16\n",
			want: "c.yaml:12: spec.clusterCidr: duplicate field (first at line 5)\n",
			docs: 1,
		},
		{
			name: "unknown kind",
			src:  strings.Replace(yamlCluster, "KubernetesCluster", "KubernetesClustr", 1),
			want: `c.yaml:1: kind: unknown kind "KubernetesClustr", did you mean "KubernetesCluster"? (accepted: KubernetesCluster, kubernetes-cluster, kubernetes_cluster, ClusterUpdate, cluster-update, cluster_update)` + "\n",
		},
		{
			name: "missing kind",
			src:  "metadata:\n  name: x\n",
			want: "c.yaml:1: kind: required (accepted: KubernetesCluster, kubernetes-cluster, kubernetes_cluster, ClusterUpdate, cluster-update, cluster_update)\n",
		},
		{
			name: "node kind",
			src:  "kind: Node\n",
			want: "c.yaml:1: kind: kind Node cannot be written in a manifest: nodes register themselves through their agent\n",
		},
		{
			name: "not a mapping",
			src:  "- a\n- b\n",
			want: "c.yaml:1: a manifest document must be a mapping with kind, metadata and spec, got a list\n",
		},
		{
			name: "wrong apiVersion",
			src:  "apiVersion: v2\n" + yamlCluster,
			want: `c.yaml:1: apiVersion: "v2" is not kcore.dev/v1` + "\n",
			docs: 1,
		},
		{
			name: "status is ignored",
			src:  yamlCluster + "status:\n  phase: ready\n  bogus: 1\n",
			docs: 1,
		},
		{
			name: "multi-document with empty documents and aliases",
			src:  "---\n---\n# only a comment\n---\n" + yamlCluster + "---\n~\n---\n" + strings.Replace(yamlCluster, "kind: KubernetesCluster", "kind: kubernetes_cluster", 1),
			docs: 2,
		},
		{
			name: "merge keys",
			src:  "kind: ClusterUpdate\nmetadata: {name: u}\nspec:\n  <<: &base {version: 0.5.0, allNodes: true, bogus: 1}\n  strategy: batched\n",
			want: `c.yaml:4: spec: unknown field "bogus", expected one of version, flakeRef, flakeRev, nixpkgsRev, allNodes, nodes, strategy, maxUnavailable, batchSize, drainVms, activation, updateKind, schemaVersion, previousSchemaVersion, minCompatibleReader, approval, approve, testedOsPins` + "\n",
			docs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, ds := ParseYAML("c.yaml", []byte(tt.src))
			if got := diagStrings(ds); got != tt.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tt.want)
			}
			if len(docs) != tt.docs {
				t.Errorf("got %d documents, want %d", len(docs), tt.docs)
			}
		})
	}
}

func TestParseYAMLValuesAndPositions(t *testing.T) {
	src := `# leading comment
kind: kubernetes-cluster
metadata:
  name: lab
  labels: {zone: a}
spec:
  clusterCidr: 10.244.0.0/16
  cilium:
    mtu: 9000
    autoDirectNodeRoutes: false
  controlPlaneNodes:
    - nodeId: node-1
      advertiseAddress: 192.168.40.1
    - &n2
      nodeId: node-2
      advertiseAddress: 192.168.40.2
`
	docs, ds := ParseYAML("c.yaml", []byte(src))
	if len(ds) != 0 || len(docs) != 1 {
		t.Fatalf("docs %d, diagnostics:\n%s", len(docs), diagStrings(ds))
	}
	d := docs[0]
	c := d.Object.(*api.KubernetesCluster)
	if d.Kind != api.KindKubernetesCluster || c.Kind != api.KindKubernetesCluster || d.Name != "lab" || d.Format != FormatYAML {
		t.Errorf("document = %+v", d)
	}
	if c.Spec.Cilium.MTU != 9000 || c.Spec.Cilium.AutoDirectNodeRoutes == nil || *c.Spec.Cilium.AutoDirectNodeRoutes ||
		c.Metadata.Labels["zone"] != "a" || len(c.Spec.ControlPlaneNodes) != 2 || c.Spec.ControlPlaneNodes[1].NodeID != "node-2" {
		t.Errorf("object = %+v", c)
	}
	for path, line := range map[string]int{
		"":                          2,
		"kind":                      2,
		"metadata.name":             4,
		"spec.cilium.mtu":           9,
		"spec.cilium.tunnel":        8,
		"spec.controlPlaneNodes[1]": 14,
		"spec.controlPlaneNodes[1].advertiseAddress": 16,
		"spec.controlPlaneNodes[1].iface":            14,
		"spec.controlPlaneNodes[0].advertiseAddress": 13,
		"spec.workerNodes[0].nodeId":                 6,
	} {
		if got := d.PosOf(path); got != (Pos{File: "c.yaml", Line: line}) {
			t.Errorf("PosOf(%q) = %v, want line %d", path, got, line)
		}
	}
}

// TestParseYAMLSyntaxErrorPosition checks that each class of YAML syntax
// error points at the character that is wrong, not at the line above it or
// at the start of the enclosing mapping or list (where yaml.v3 reports it).
func TestParseYAMLSyntaxErrorPosition(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{
			name: "tab in indentation",
			src:  "kind: KubernetesCluster\nspec:\n\tclusterCidr: x\n",
			want: "c.yaml:3:1: invalid YAML: found character that cannot start any token",
		},
		{
			name: "character that cannot start a token",
			src:  "kind: KubernetesCluster\nmetadata:\n  name: @lab\n",
			want: "c.yaml:3:9: invalid YAML: found character that cannot start any token",
		},
		{
			name: "key indented less than its siblings",
			src:  "kind: KubernetesCluster\nspec:\n  clusterCidr: x\n serviceCidr: y\n",
			want: "c.yaml:4:2: invalid YAML: did not find expected key",
		},
		{
			name: "key indented more than its siblings",
			src:  "kind: KubernetesCluster\nspec:\n  clusterCidr: x\n    serviceCidr: y\n",
			want: "c.yaml:4:16: invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "list entry among mapping keys",
			src:  "kind: KubernetesCluster\nspec:\n  clusterCidr: x\n  - y\n",
			want: "c.yaml:4:3: invalid YAML: did not find expected key",
		},
		{
			name: "mapping key among list entries",
			src:  "kind: KubernetesCluster\nspec:\n  workerNodes:\n    - nodeId: a\n    b: 1\n",
			// "b" alone would continue the plain scalar "a": the colon makes it wrong.
			want: "c.yaml:5:6: invalid YAML: did not find expected '-' indicator",
		},
		{
			name: "second colon on a line",
			src:  "kind: KubernetesCluster\nmetadata:\n  name: a: b\n",
			want: "c.yaml:3:10: invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "unclosed flow list",
			src:  "kind: KubernetesCluster\nmetadata:\n  name: [lab\n",
			want: "c.yaml:3:10: invalid YAML: did not find expected ',' or ']'",
		},
		{
			name: "unclosed quote",
			src:  "kind: KubernetesCluster\nmetadata:\n  name: \"lab\n",
			want: "c.yaml:3:9: invalid YAML: found unexpected end of stream",
		},
		{
			name: "in a later document, after multi-byte characters",
			src:  "kind: KubernetesCluster\nmetadata:\n  name: lab # ünïcödé\n---\nkind: ClusterUpdate\nspec:\n  version: ü\n - x\n",
			want: "c.yaml:8:2: invalid YAML: did not find expected key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ds := ParseYAML("c.yaml", []byte(tt.src))
			if got := strings.TrimSuffix(diagStrings(ds), "\n"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
