package schemas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/manifest"
	"kcore.dev/kcore/schemas"
)

// examplesDir is the repository's examples/, relative to this package.
const examplesDir = "../examples"

// validator compiles every embedded schema with a real JSON Schema validator
// and picks the one for a document's kind.
type validator struct {
	byKind map[string]*jsonschema.Schema
}

func newValidator(t *testing.T) *validator {
	t.Helper()
	c := jsonschema.NewCompiler()
	ids := map[string]string{}
	for _, name := range schemas.Names() {
		data, err := schemas.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		m := doc.(map[string]any)
		id, title := m["$id"].(string), m["title"].(string)
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
		ids[title] = id
	}
	v := &validator{byKind: map[string]*jsonschema.Schema{}}
	for title, id := range ids {
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compile %s: %v", id, err)
		}
		v.byKind[title] = s
	}
	for _, k := range []string{api.KindKubernetesCluster, api.KindClusterUpdate, api.KindNode, api.KindNodeState} {
		if v.byKind[k] == nil {
			t.Fatalf("no embedded schema for %s", k)
		}
	}
	return v
}

// validate checks one JSON document against the schema of its kind.
func (v *validator) validate(t *testing.T, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parse instance: %v", err)
	}
	k, _ := inst.(map[string]any)["kind"].(string)
	s := v.byKind[api.CanonicalKind(k)]
	if s == nil {
		t.Fatalf("document kind %q has no schema", k)
	}
	return s.Validate(inst)
}

// yamlDocs converts every document of a YAML stream to JSON.
func yamlDocs(t *testing.T, data []byte) [][]byte {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out [][]byte
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("parse YAML: %v", err)
		}
		if doc == nil {
			continue
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("convert YAML to JSON: %v", err)
		}
		out = append(out, b)
	}
}

// hclDocs reads an HCL manifest with pkg/manifest and encodes each object.
func hclDocs(t *testing.T, path string, data []byte) [][]byte {
	t.Helper()
	docs, diags := manifest.Parse(path, data)
	if diags.HasErrors() {
		t.Fatalf("parse HCL: %v", diags)
	}
	var out [][]byte
	for _, d := range docs {
		b, err := json.Marshal(d.Object)
		if err != nil {
			t.Fatalf("encode %s: %v", d.Name, err)
		}
		out = append(out, b)
	}
	return out
}

// TestExamplesMatchSchemas validates every manifest under examples/ against
// the schema of its kind.
func TestExamplesMatchSchemas(t *testing.T) {
	v := newValidator(t)
	var files []string
	err := filepath.WalkDir(examplesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".hcl":
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk examples: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("no manifests under %s", examplesDir)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(examplesDir, path)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var docs [][]byte
			if filepath.Ext(path) == ".hcl" {
				docs = hclDocs(t, path, data)
			} else {
				docs = yamlDocs(t, data)
			}
			if len(docs) == 0 {
				t.Fatal("no documents")
			}
			for i, d := range docs {
				if err := v.validate(t, d); err != nil {
					t.Errorf("document %d does not match its schema:\n%v", i+1, err)
				}
			}
		})
	}
}

const validCluster = `
kind: KubernetesCluster
metadata:
  name: one
spec:
  clusterCidr: 10.244.0.0/16
  serviceCidr: 10.96.0.0/12
  apiServerEndpoint: 192.168.40.10:6443
  controlPlaneNodes:
    - nodeId: node-1
      advertiseAddress: 192.168.40.10
  scheduleOnControlPlane: true
`

// leaves returns the innermost validation errors, where the cause is named.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// TestSchemasRejectMistakes shows the validator really rejects: each bad
// manifest fails at the expected place with the expected kind of error.
func TestSchemasRejectMistakes(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name    string
		doc     string
		wantAt  string // instance location of the error, "/"-joined
		wantErr any    // a *kind.X the error must be
	}{
		{"valid", validCluster, "", nil},
		{"kind alias", strings.Replace(validCluster, "kind: KubernetesCluster", "kind: kubernetes_cluster", 1), "", nil},
		{"unknown field", validCluster + "  highAvailabilty:\n    enabled: true\n", "spec", &kind.AdditionalProperties{}},
		{"unknown nested field", strings.Replace(validCluster, "advertiseAddress:", "advertiseAddr:", 1), "spec/controlPlaneNodes/0", &kind.AdditionalProperties{}},
		{"wrong enum", validCluster + "  cni: calico\n", "spec/cni", &kind.Enum{}},
		{"wrong apiVersion", strings.Replace(validCluster, "kind: KubernetesCluster", "kind: KubernetesCluster\napiVersion: v1", 1), "apiVersion", &kind.Enum{}},
		{"missing required", strings.Replace(validCluster, "  clusterCidr: 10.244.0.0/16\n", "", 1), "spec", &kind.Required{}},
		{"wrong type", validCluster + "  cilium:\n    mtu: large\n", "spec/cilium/mtu", &kind.Type{}},
		{"zero volume size", validCluster + "  localProvisioner:\n    enabled: true\n    volumes:\n      - {name: data, nodeId: node-1, storageClass: lvm, sizeBytes: 0}\n", "spec/localProvisioner/volumes/0/sizeBytes", &kind.Minimum{}},
		{"update bad strategy", "kind: ClusterUpdate\nmetadata: {name: r}\nspec: {version: 0.5.0, strategy: all-at-once-please}\n", "spec/strategy", &kind.Enum{}},
		{"update unknown pin", "kind: ClusterUpdate\nmetadata: {name: r}\nspec:\n  version: 0.5.0\n  testedOsPins: {nixpkgs_rev: abc}\n", "spec/testedOsPins", &kind.AdditionalProperties{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs := yamlDocs(t, []byte(tt.doc))
			err := v.validate(t, docs[0])
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a validation error, got %v", err)
			}
			for _, l := range leaves(ve) {
				if strings.Join(l.InstanceLocation, "/") == tt.wantAt && sameType(l.ErrorKind, tt.wantErr) {
					return
				}
			}
			t.Errorf("no %T error at /%s in:\n%v", tt.wantErr, tt.wantAt, err)
		})
	}
}

func sameType(a, b any) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }
