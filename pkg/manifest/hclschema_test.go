package manifest

import (
	"strings"
	"testing"
)

// TestHCLSchemaIsWhatTheReaderReads: every attribute HCLSchema lists for a
// cluster is accepted by ParseHCL at the field path it names, and an
// unknown resource type is refused.
func TestHCLSchemaIsWhatTheReaderReads(t *testing.T) {
	fields, err := HCLSchema(ResourceKubernetesCluster)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]HCLField{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	for name, want := range map[string]struct {
		path     string
		value    HCLValue
		required bool
	}{
		"name":               {"metadata.name", HCLString, true},
		"labels":             {"metadata.labels", HCLStringMap, false},
		"cluster_cidr":       {"spec.clusterCidr", HCLString, true},
		"control_plane_node": {"spec.controlPlaneNodes", HCLBlockList, false},
		"local_provisioner":  {"spec.localProvisioner", HCLBlock, false},
		"registry_mirror":    {"spec.registryMirrors", HCLBlockList, false},
	} {
		f, ok := byName[name]
		if !ok || f.Path != want.path || f.Value != want.value || f.Required != want.required {
			t.Errorf("%s = %+v (listed %v), want %+v", name, f, ok, want)
		}
	}
	vol := byName["local_provisioner"].Fields
	if len(vol) == 0 || vol[len(vol)-1].Name != "volume" || vol[len(vol)-1].Fields[3].Name != "size_bytes" || vol[len(vol)-1].Fields[3].Value != HCLInt {
		t.Errorf("local_provisioner fields = %+v", vol)
	}

	// Write every top-level string attribute HCLSchema lists: the reader
	// must accept each and store it at the listed path.
	var b strings.Builder
	b.WriteString("resource \"kcore_kubernetes_cluster\" \"x\" {\n")
	for _, f := range fields {
		if f.Value == HCLString {
			b.WriteString("  " + f.Name + " = \"v-" + f.Name + "\"\n")
		}
	}
	b.WriteString("}\n")
	docs, ds := ParseHCL("x.hcl", []byte(b.String()))
	if ds.HasErrors() || len(docs) != 1 {
		t.Fatalf("the reader refused HCLSchema's attributes: %v", ds)
	}
	for _, f := range fields {
		if f.Value != HCLString {
			continue
		}
		if _, ok := docs[0].positions[f.Path]; !ok {
			t.Errorf("%s: the reader recorded no position at %s", f.Name, f.Path)
		}
	}

	if _, err := HCLSchema("kcore_nope"); err == nil {
		t.Error("HCLSchema of an unknown resource type succeeded")
	}
}
