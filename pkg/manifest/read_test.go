package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const hclUpdate = `resource "kcore_cluster_update" "u" {
  version   = "0.5.0"
  all_nodes = true
}
`

func TestReadPathDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b/cluster.yml":        strings.Replace(yamlCluster, "name: lab", "name: b", 1),
		"a.yaml":               yamlCluster,
		"c/update.hcl":         hclUpdate,
		".hidden.yaml":         "not: [valid",
		".git/config.yaml":     "not: [valid",
		"notes.txt":            "ignored",
		"d/deep/e/more.YAML":   strings.Replace(yamlCluster, "name: lab", "name: e", 1),
		"d/deep/.skip/x.yaml":  "not: [valid",
		"d/deep/e/.swap.hcl":   "not valid",
		"d/deep/e/README.md":   "ignored",
		"d/deep/e/config.json": "{}",
	})
	docs, ds := ReadPath(dir)
	if len(ds) != 0 {
		t.Fatalf("diagnostics:\n%s", diagStrings(ds))
	}
	var got []string
	for _, d := range docs {
		rel, _ := filepath.Rel(dir, d.Pos.File)
		got = append(got, rel+":"+d.Kind+"/"+d.Name)
	}
	want := "a.yaml:KubernetesCluster/lab b/cluster.yml:KubernetesCluster/b c/update.hcl:ClusterUpdate/u d/deep/e/more.YAML:KubernetesCluster/e"
	if strings.Join(got, " ") != want {
		t.Errorf("documents in order:\n%s\nwant:\n%s", strings.Join(got, " "), want)
	}
}

func TestReadPathProblems(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml":     yamlCluster,
		"b.yaml":     "kind: Bogus\n---\n" + yamlCluster,
		"c.hcl":      strings.Replace(hclCluster, "cluster_cidr ", "cluster_cdr  ", 1),
		"d.yaml":     "kind: [\n",
		"sub/u.hcl":  hclUpdate,
		"sub/u2.hcl": hclUpdate,
		"empty/.x":   "",
	})
	docs, ds := ReadPaths(dir, filepath.Join(dir, "a.yaml"), filepath.Join(dir, "missing.yaml"), filepath.Join(dir, "empty"))
	got := strings.ReplaceAll(diagStrings(ds), dir+string(filepath.Separator), "")
	want := `b.yaml:1: kind: unknown kind "Bogus" (accepted: KubernetesCluster, kubernetes-cluster, kubernetes_cluster, ClusterUpdate, cluster-update, cluster_update)
b.yaml:5: metadata.name: KubernetesCluster "lab" is already declared at a.yaml:3
c.hcl:1:37: name: KubernetesCluster "lab" is already declared at a.yaml:3
c.hcl:2:3: unknown attribute "cluster_cdr", did you mean "cluster_cidr"?
d.yaml:1:7: invalid YAML: did not find expected node content
empty: no *.yaml, *.yml or *.hcl files in this directory
missing.yaml: read: no such file or directory
sub/u2.hcl:1:33: name: ClusterUpdate "u" is already declared at sub/u.hcl:1:33
`
	if len(docs) != 5 {
		t.Errorf("read %d documents, want the 5 that parsed (a.yaml once)", len(docs))
	}
	if got != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseByExtension(t *testing.T) {
	tests := []struct {
		file, src, kind, diag string
	}{
		{file: "x.yaml", src: yamlCluster, kind: api.KindKubernetesCluster},
		{file: "x.yml", src: yamlCluster, kind: api.KindKubernetesCluster},
		{file: "x.hcl", src: hclUpdate, kind: api.KindClusterUpdate},
		{file: "x.json", src: "{}", diag: "x.json: unsupported file type: want .yaml, .yml or .hcl"},
		{file: "x.yaml", src: yamlCluster + "---\n" + yamlCluster, kind: api.KindKubernetesCluster,
			diag: `x.yaml:15: metadata.name: KubernetesCluster "lab" is already declared at x.yaml:3`},
	}
	for _, tt := range tests {
		docs, ds := Parse(tt.file, []byte(tt.src))
		if got := strings.TrimSpace(diagStrings(ds)); got != tt.diag {
			t.Errorf("%s: diagnostics %q, want %q", tt.file, got, tt.diag)
		}
		if tt.kind != "" && (len(docs) == 0 || docs[0].Kind != tt.kind) {
			t.Errorf("%s: documents %v, want kind %s", tt.file, docs, tt.kind)
		}
	}
}
