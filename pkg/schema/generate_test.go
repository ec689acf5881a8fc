package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Paths relative to this package's directory, where go test runs.
const (
	apiDir     = "../api"
	schemasDir = "../../schemas"
)

func generate(t *testing.T) []File {
	t.Helper()
	files, err := Generate(apiDir)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return files
}

// TestSchemasUpToDate fails when schemas/ differs from what pkg/api generates.
func TestSchemasUpToDate(t *testing.T) {
	files := generate(t)
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		got, err := os.ReadFile(filepath.Join(schemasDir, f.Name))
		if err != nil {
			t.Errorf("schemas/%s: %v; run make schemas", f.Name, err)
			continue
		}
		if !bytes.Equal(got, f.Data) {
			t.Errorf("schemas/%s is stale: it differs from what pkg/api and pkg/schema generate; run make schemas and commit the result", f.Name)
		}
	}
	disk, err := filepath.Glob(filepath.Join(schemasDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range disk {
		if !want[filepath.Base(p)] {
			t.Errorf("schemas/%s is not generated from pkg/api any more; delete it and run make schemas", filepath.Base(p))
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b := generate(t), generate(t)
	for i := range a {
		if !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between two runs", a[i].Name)
		}
	}
}

func TestGenerateShape(t *testing.T) {
	for _, f := range generate(t) {
		t.Run(f.Name, func(t *testing.T) {
			if !bytes.HasSuffix(f.Data, []byte("}\n")) || bytes.HasSuffix(f.Data, []byte("\n\n")) {
				t.Error("want exactly one trailing newline")
			}
			var doc map[string]any
			if err := json.Unmarshal(f.Data, &doc); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]any{
				"$schema":              Draft,
				"$id":                  BaseURL + strings.ToLower(f.Kind) + ".json",
				"title":                f.Kind,
				"type":                 "object",
				"additionalProperties": false,
			} {
				if doc[key] != want {
					t.Errorf("%s = %v, want %v", key, doc[key], want)
				}
			}
			if d, _ := doc["description"].(string); d == "" {
				t.Error("no description")
			}
			walk(t, f.Kind, doc)
		})
	}
}

// walk checks every object in the tree: closed, described, and required
// names exist.
func walk(t *testing.T, path string, s map[string]any) {
	t.Helper()
	if d, _ := s["description"].(string); d == "" && !strings.HasSuffix(path, "[]") {
		t.Errorf("%s: no description", path)
	}
	if items, ok := s["items"].(map[string]any); ok {
		walk(t, path+"[]", items)
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return
	}
	if s["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties is not false", path)
	}
	req, _ := s["required"].([]any)
	for _, r := range req {
		if _, ok := props[r.(string)]; !ok {
			t.Errorf("%s: required %q is not a property", path, r)
		}
	}
	for name, p := range props {
		walk(t, path+"."+name, p.(map[string]any))
	}
}

// TestRequired pins which fields a manifest must set: those without
// omitempty/omitzero, never status or controller-set metadata.
func TestRequired(t *testing.T) {
	docs := map[string]map[string]any{}
	for _, f := range generate(t) {
		var doc map[string]any
		if err := json.Unmarshal(f.Data, &doc); err != nil {
			t.Fatal(err)
		}
		docs[f.Kind] = doc
	}
	tests := []struct {
		kind, path string
		want       string
	}{
		{"KubernetesCluster", "", "kind,metadata,spec"},
		{"KubernetesCluster", "metadata", "name"},
		{"KubernetesCluster", "spec", "apiServerEndpoint,clusterCidr,controlPlaneNodes,serviceCidr"},
		{"KubernetesCluster", "spec.controlPlaneNodes[]", "advertiseAddress,nodeId"},
		{"KubernetesCluster", "spec.highAvailability", ""},
		{"KubernetesCluster", "spec.localProvisioner.volumes[]", "name,nodeId,storageClass"},
		{"ClusterUpdate", "", "kind,metadata,spec"},
		{"ClusterUpdate", "spec", "version"},
		{"ClusterUpdate", "spec.testedOsPins", ""},
		{"Node", "", "facts,kind,metadata"},
		{"NodeState", "", "cluster,generation,nodeId"},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"."+tt.path, func(t *testing.T) {
			s := docs[tt.kind]
			if tt.path != "" {
				for seg := range strings.SplitSeq(tt.path, ".") {
					name, list := strings.CutSuffix(seg, "[]")
					s = s["properties"].(map[string]any)[name].(map[string]any)
					if list {
						s = s["items"].(map[string]any)
					}
				}
			}
			req, _ := s["required"].([]any)
			got := make([]string, len(req))
			for i, r := range req {
				got[i] = r.(string)
			}
			if g := strings.Join(got, ","); g != tt.want {
				t.Errorf("required = %q, want %q", g, tt.want)
			}
		})
	}
}

func TestGenerateErrors(t *testing.T) {
	if _, err := Generate(t.TempDir()); err == nil {
		t.Error("Generate on an empty directory: want an error")
	}
	if _, err := Generate(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Generate on a missing directory: want an error")
	}
}

func TestFieldDescription(t *testing.T) {
	tests := []struct{ comment, goName, jsonName, want string }{
		{"ClusterDNS is the DNS address.", "ClusterDNS", "clusterDns", "clusterDns is the DNS address."},
		{"Name, e.g. enp6s0.", "Name", "name", "name, e.g. enp6s0."},
		{"Metadata.Name is the node id.", "Metadata", "metadata", "Metadata.Name is the node id."},
		{"Names the thing.", "Name", "name", "Names the thing."},
		{"The pod network.", "ClusterCIDR", "clusterCidr", "The pod network."},
	}
	for _, tt := range tests {
		if got := fieldDescription(tt.comment, tt.goName, tt.jsonName); got != tt.want {
			t.Errorf("fieldDescription(%q) = %q, want %q", tt.comment, got, tt.want)
		}
	}
}
