package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
)

// TestReadCommandsOutput runs every read command with -o json and -o yaml
// against a real controller and parses what it printed.
func TestReadCommandsOutput(t *testing.T) {
	a := newApplyEnv(t)
	a.must("kubernetes", "apply", "-f", a.write("lab.yaml", labManifest(t)), "--yes")
	a.setStatus("lab", api.ClusterStatus{Phase: api.PhaseReady, Nodes: []api.NodeStatus{{NodeID: "node-105", Role: api.RoleControlPlane, Ready: true}}})
	a.must("apply", "-f", a.write("u1.yaml", "kind: ClusterUpdate\nmetadata:\n  name: u1\nspec:\n  version: 0.5.0\n  allNodes: true\n"), "--yes")
	reads := []struct {
		args  []string
		check func(t *testing.T, v any)
	}{
		{[]string{"kubernetes", "list"}, wantListNamed("lab")},
		{[]string{"kubernetes", "get", "lab"}, wantField("metadata")},
		{[]string{"kubernetes", "health", "lab"}, wantField("checks")},
		{[]string{"node", "list"}, wantListNamed("node-105")},
		{[]string{"node", "get", "node-105"}, wantField("facts")},
		{[]string{"update", "list"}, wantListNamed("u1")},
		{[]string{"update", "status", "u1"}, wantField("spec")},
		{[]string{"controller", "members"}, func(t *testing.T, v any) {
			if l, ok := v.([]any); !ok || len(l) == 0 {
				t.Errorf("members: %v", v)
			}
		}},
		{[]string{"audit"}, func(t *testing.T, v any) {
			if _, ok := v.([]any); !ok {
				t.Errorf("audit: %v", v)
			}
		}},
	}
	for _, r := range reads {
		for _, format := range []string{outputJSON, outputYAML} {
			t.Run(strings.Join(r.args, " ")+" -o "+format, func(t *testing.T) {
				out := a.must(append(r.args, "-o", format)...)
				var v any
				var err error
				if format == outputJSON {
					err = json.Unmarshal([]byte(out), &v)
				} else {
					err = yaml.Unmarshal([]byte(out), &v)
				}
				if err != nil {
					t.Fatalf("parse %s: %v\n%s", format, err, out)
				}
				r.check(t, v)
			})
		}
		t.Run(strings.Join(r.args, " ")+" -o bogus", func(t *testing.T) {
			if _, _, err := a.runIn(strings.NewReader(""), append(r.args, "-o", "bogus")...); err == nil || !strings.Contains(err.Error(), "want table, json or yaml") {
				t.Fatalf("-o bogus: %v", err)
			}
		})
	}
}

// wantField checks that a decoded object has the top-level field.
func wantField(name string) func(*testing.T, any) {
	return func(t *testing.T, v any) {
		t.Helper()
		m, ok := v.(map[string]any)
		if !ok || m[name] == nil {
			t.Errorf("output lacks %q: %v", name, v)
		}
	}
}

// wantListNamed checks that a decoded list holds an object named name.
func wantListNamed(name string) func(*testing.T, any) {
	return func(t *testing.T, v any) {
		t.Helper()
		l, _ := v.([]any)
		for _, it := range l {
			if m, ok := it.(map[string]any); ok {
				if meta, ok := m["metadata"].(map[string]any); ok && meta["name"] == name {
					return
				}
			}
		}
		t.Errorf("list lacks %q: %v", name, v)
	}
}
