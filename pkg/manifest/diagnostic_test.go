package manifest

import (
	"testing"

	"kcore.dev/kcore/pkg/api"
)

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{Pos{"cluster.yaml", 31, 0}, api.SeverityError, "spec.highAvailability.vipAddress", "required when highAvailability.enabled is true"},
			"cluster.yaml:31: spec.highAvailability.vipAddress: required when highAvailability.enabled is true"},
		{Diagnostic{Pos{"cluster.yaml", 12, 0}, api.SeverityWarning, "spec.controlPlaneNodes", "use an odd number"},
			"cluster.yaml:12: warning: spec.controlPlaneNodes: use an odd number"},
		{Diagnostic{Pos{"c.hcl", 3, 7}, api.SeverityError, "", "Invalid expression"}, "c.hcl:3:7: Invalid expression"},
		{Diagnostic{Pos{"dir", 0, 0}, api.SeverityError, "", "read: permission denied"}, "dir: read: permission denied"},
		{Diagnostic{Pos{"", 2, 0}, api.SeverityError, "kind", "required"}, "<input>:2: kind: required"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestDiagnosticsSortAndErr(t *testing.T) {
	ds := Diagnostics{
		{Pos: Pos{"b.yaml", 1, 0}, Severity: api.SeverityWarning, Message: "w"},
		{Pos: Pos{"a.yaml", 9, 0}, Severity: api.SeverityWarning, Message: "first at 9"},
		{Pos: Pos{"a.yaml", 2, 5}, Severity: api.SeverityWarning, Message: "col 5"},
		{Pos: Pos{"a.yaml", 2, 1}, Severity: api.SeverityWarning, Message: "col 1"},
		{Pos: Pos{"a.yaml", 9, 0}, Severity: api.SeverityWarning, Message: "second at 9"},
	}
	ds.Sort()
	want := []string{"col 1", "col 5", "first at 9", "second at 9", "w"}
	for i, d := range ds {
		if d.Message != want[i] {
			t.Errorf("sorted[%d] = %q, want %q", i, d.Message, want[i])
		}
	}
	if ds.HasErrors() || ds.Err() != nil {
		t.Errorf("warnings only: HasErrors %v, Err %v", ds.HasErrors(), ds.Err())
	}
	var none Diagnostics
	if none.Err() != nil {
		t.Error("nil Diagnostics has an error")
	}
}

func TestSuggest(t *testing.T) {
	allowed := []string{"clusterCidr", "serviceCidr", "apiServerEndpoint", "cni"}
	for got, want := range map[string]string{
		"clusterCIDR":         "clusterCidr",
		"cluster_cidr":        "clusterCidr",
		"servceCidr":          "serviceCidr",
		"apiserverendpoint":   "apiServerEndpoint",
		"cnii":                "cni",
		"x":                   "",
		"somethingElseEntire": "",
	} {
		if s := suggest(got, allowed); s != want {
			t.Errorf("suggest(%q) = %q, want %q", got, s, want)
		}
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"apiServerEndpoint":    "api_server_endpoint",
		"loadBalancerIpPools":  "load_balancer_ip_pools",
		"cephSha256":           "ceph_sha256",
		"mtu":                  "mtu",
		"autoDirectNodeRoutes": "auto_direct_node_routes",
		"testedOsPins":         "tested_os_pins",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}
