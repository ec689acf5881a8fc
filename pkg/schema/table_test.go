package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

// baseCluster is a valid cluster that exercises every defaulted part: HA,
// Cilium, workers and a shared-mode volume.
const baseCluster = `{
  "kind": "KubernetesCluster",
  "metadata": {"name": "lab"},
  "spec": {
    "clusterCidr": "10.244.0.0/16",
    "serviceCidr": "10.96.0.0/12",
    "clusterDns": "10.96.0.10",
    "apiServerEndpoint": "192.168.40.200:6443",
    "cni": "cilium",
    "cilium": {"mode": "native-routing", "mtu": 1500, "tunnel": "disabled", "autoDirectNodeRoutes": true},
    "controlPlaneNodes": [{"nodeId": "cp1", "advertiseAddress": "192.168.40.10", "iface": "enp6s0"}],
    "workerNodes": [{"nodeId": "w1", "advertiseAddress": "192.168.40.20", "iface": "enp6s0"}],
    "highAvailability": {"enabled": true, "vipAddress": "192.168.40.200", "vipInterface": "enp6s0", "healthCheck": true},
    "localProvisioner": {
      "enabled": true, "storageClassName": "local-path", "mode": "shared",
      "volumes": [{"name": "data", "nodeId": "w1", "storageClass": "lvm", "sizeBytes": 1073741824, "fsType": "ext4", "role": "filesystem", "volumeGroup": "vg0"}]
    }
  }
}`

const baseUpdate = `{
  "kind": "ClusterUpdate",
  "metadata": {"name": "release-0-5-0"},
  "spec": {
    "version": "0.5.0", "allNodes": true, "strategy": "one-at-a-time", "maxUnavailable": 1, "batchSize": 1,
    "activation": "auto", "updateKind": "kcore", "approval": "manual"
  }
}`

// validated decodes doc into its kind, defaults and validates it, and
// returns the defaulted object re-encoded plus the issues.
func validated(t *testing.T, kind string, doc map[string]any) (map[string]any, api.Issues) {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	var issues api.Issues
	switch kind {
	case api.KindKubernetesCluster:
		var c api.KubernetesCluster
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		c.Default()
		issues, out = c.Validate(), &c
	case api.KindClusterUpdate:
		var u api.ClusterUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		u.Default()
		issues, out = u.Validate(), &u
	default:
		t.Fatalf("no validation for kind %s", kind)
	}
	return decode(t, mustJSON(t, out)), issues
}

func base(t *testing.T, kind string) map[string]any {
	t.Helper()
	if kind == api.KindKubernetesCluster {
		return decode(t, []byte(baseCluster))
	}
	return decode(t, []byte(baseUpdate))
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// walkTo returns the object holding the last segment of a table path and
// that segment's name; "[]" steps into the first element of a list.
func walkTo(t *testing.T, doc map[string]any, path string) (map[string]any, string) {
	t.Helper()
	segs := strings.Split(path, ".")
	m := doc
	for _, seg := range segs[:len(segs)-1] {
		name, list := strings.CutSuffix(seg, "[]")
		next := m[name]
		if list {
			next = next.([]any)[0]
		}
		var ok bool
		if m, ok = next.(map[string]any); !ok {
			t.Fatalf("%s: %s is not an object in the base document", path, seg)
		}
	}
	return m, segs[len(segs)-1]
}

// issuePath is the path api.Validate reports for a table path.
func issuePath(path string) string { return strings.ReplaceAll(path, "[]", "[0]") }

func issuesAt(is api.Issues, path string) api.Issues {
	var out api.Issues
	for _, i := range is.Errors() {
		if i.Path == path {
			out = append(out, i)
		}
	}
	return out
}

// splitKind splits "KubernetesCluster.spec.cni" into kind and field path.
func splitKind(key string) (string, string) {
	kind, path, _ := strings.Cut(key, ".")
	return kind, path
}

func validatedKind(kind string) bool {
	return kind == api.KindKubernetesCluster || kind == api.KindClusterUpdate
}

func TestTableEnumsMatchValidation(t *testing.T) {
	for key, c := range constraints() {
		kind, path := splitKind(key)
		if len(c.enum) == 0 || !validatedKind(kind) || strings.HasPrefix(path, "status.") {
			continue
		}
		t.Run(key, func(t *testing.T) {
			switch path {
			case "kind":
				for _, v := range c.enum {
					if got := api.CanonicalKind(v); got != kind {
						t.Errorf("CanonicalKind(%q) = %q, want %q", v, got, kind)
					}
				}
				return
			case "apiVersion":
				if len(c.enum) != 1 || c.enum[0] != api.APIVersion {
					t.Errorf("enum = %v, want [%s]", c.enum, api.APIVersion)
				}
				return
			}
			for _, v := range c.enum {
				doc := base(t, kind)
				m, field := walkTo(t, doc, path)
				m[field] = v
				_, issues := validated(t, kind, doc)
				for _, i := range issuesAt(issues, issuePath(path)) {
					if strings.Contains(i.Message, "is not one of") {
						t.Errorf("allowed value %q rejected: %v", v, i)
					}
				}
			}
			doc := base(t, kind)
			m, field := walkTo(t, doc, path)
			m[field] = "not-an-allowed-value"
			if _, issues := validated(t, kind, doc); len(issuesAt(issues, issuePath(path))) == 0 {
				t.Errorf("a value outside the enum is accepted by api.Validate; issues: %v", issues)
			}
		})
	}
}

func TestTableDefaultsMatchDefault(t *testing.T) {
	for key, c := range constraints() {
		kind, path := splitKind(key)
		if c.def == nil {
			continue
		}
		if !validatedKind(kind) {
			t.Errorf("%s: default on a kind api does not default", key)
			continue
		}
		t.Run(key, func(t *testing.T) {
			doc := base(t, kind)
			m, field := walkTo(t, doc, path)
			delete(m, field)
			out, issues := validated(t, kind, doc)
			if issues.HasErrors() {
				t.Fatalf("base document without %s is invalid: %v", path, issues)
			}
			m, field = walkTo(t, out, path)
			got, want := string(mustJSON(t, m[field])), string(mustJSON(t, c.def))
			if got != want {
				t.Errorf("api.Default sets %s, the schema says %s", got, want)
			}
		})
	}
}

func TestTableMinimumsMatchValidation(t *testing.T) {
	for key, c := range constraints() {
		kind, path := splitKind(key)
		if c.minimum == nil {
			continue
		}
		t.Run(key, func(t *testing.T) {
			for _, tt := range []struct {
				v     int64
				valid bool
			}{{*c.minimum, true}, {*c.minimum - 1, false}} {
				doc := base(t, kind)
				m, field := walkTo(t, doc, path)
				m[field] = tt.v
				_, issues := validated(t, kind, doc)
				if got := len(issuesAt(issues, issuePath(path))) == 0; got != tt.valid {
					t.Errorf("%s = %d: api.Validate valid=%v, schema minimum says %v (%v)", path, tt.v, got, tt.valid, issues)
				}
			}
		})
	}
}

// TestBaseDocumentsValid keeps the fixtures above honest.
func TestBaseDocumentsValid(t *testing.T) {
	for _, kind := range []string{api.KindKubernetesCluster, api.KindClusterUpdate} {
		if _, issues := validated(t, kind, base(t, kind)); len(issues) > 0 {
			t.Errorf("%s: %v", kind, issues)
		}
	}
}

// TestTableStatusEnums pins the status and agent enums to their constants.
func TestTableStatusEnums(t *testing.T) {
	tbl := constraints()
	tests := map[string][]string{
		"KubernetesCluster.status.phase":        {api.PhaseBootstrapping, api.PhaseReady, api.PhaseDegraded, api.PhaseUpdating, api.PhaseScaling, api.PhaseDeleting},
		"KubernetesCluster.status.nodes[].role": {api.RoleControlPlane, api.RoleWorker},
		"Node.kind":                             {api.KindNode},
		"Node.facts.storage[].class":            {api.StorageClassLVM, api.StorageClassZFS},
		"NodeState.units[].restart":             {api.RestartAlways, api.RestartOnFailure, api.RestartNever},
	}
	for key, want := range tests {
		if got := fmt.Sprint(tbl[key].enum); got != fmt.Sprint(want) {
			t.Errorf("%s: enum %s, want %s", key, got, fmt.Sprint(want))
		}
	}
}
