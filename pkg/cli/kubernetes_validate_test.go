package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// execKctl runs the real kctl command tree against buffers.
func execKctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		code = ExitCode(err)
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(&errb, "error:", msg)
		}
	}
	return out.String(), errb.String(), code
}

// validateCases are the files under testdata/validate/cases, one per class of
// mistake, with the line each must report (file:line and field path). The
// whole output is compared with testdata/validate/golden/NAME.txt.
var validateCases = []struct {
	name string
	want string
	code int
}{
	{"valid.yaml", "valid.yaml: 1 document valid", 0},
	{"bad-names.yaml", "bad-names.yaml:10: spec.controlPlaneNodes[0].nodeId:", 1},
	{"duplicate-node-ids.yaml", `duplicate-node-ids.yaml:14: spec.workerNodes[1].nodeId: duplicate node id "node-1"`, 1},
	{"no-control-plane.yaml", "no-control-plane.yaml:4: spec.controlPlaneNodes: at least one", 1},
	{"no-workers.yaml", "no-workers.yaml:11: spec.workerNodes: required unless scheduleOnControlPlane", 1},
	{"unparsable-addresses.yaml", "unparsable-addresses.yaml:14: spec.workerNodes[0].advertiseAddress:", 1},
	{"dns-outside-service-cidr.yaml", "dns-outside-service-cidr.yaml:7: spec.clusterDns: 10.244.0.10 is outside serviceCidr", 1},
	{"overlap-cluster-service.yaml", "overlap-cluster-service.yaml:6: spec.serviceCidr: 10.244.128.0/20 overlaps spec.clusterCidr", 1},
	{"overlap-pools.yaml", "overlap-pools.yaml:12: spec.cilium.loadBalancerIpPools[2]:", 1},
	{"overlap-node-address.yaml", "overlap-node-address.yaml:13: spec.workerNodes[0].advertiseAddress: 10.244.0.2 overlaps", 1},
	{"overlap-vip.yaml", "overlap-vip.yaml:16: spec.highAvailability.vipAddress: 192.168.40.2 is also the address", 1},
	{"vip-in-pool.yaml", "vip-in-pool.yaml:19: spec.highAvailability.vipAddress: 192.168.40.225 is inside the load-balancer pool", 1},
	{"endpoint-not-host-port.yaml", `endpoint-not-host-port.yaml:7: spec.apiServerEndpoint: "192.168.40.1" is not host:port`, 1},
	{"endpoint-with-scheme.yaml", `endpoint-with-scheme.yaml:7: spec.apiServerEndpoint: "https://192.168.40.1:6443" is not host:port`, 1},
	{"endpoint-bad-port.yaml", "endpoint-bad-port.yaml:7: spec.apiServerEndpoint: port", 1},
	{"endpoint-not-vip.yaml", "endpoint-not-vip.yaml:7: spec.apiServerEndpoint: host 192.168.40.1 must be the VIP", 1},
	{"ha-without-vip.yaml", "ha-without-vip.yaml:14: spec.highAvailability.vipInterface: required", 1},
	{"bad-iface.yaml", "bad-iface.yaml:19: spec.highAvailability.vipInterface:", 1},
	{"volumes-without-enabled.yaml", "volumes-without-enabled.yaml:14: spec.localProvisioner.enabled: must be true", 1},
	{"bad-storage-class.yaml", `bad-storage-class.yaml:20: spec.localProvisioner.volumes[0].storageClass: "ceph"`, 1},
	{"size-not-positive.yaml", "size-not-positive.yaml:24: spec.localProvisioner.volumes[1].sizeBytes: must be positive", 1},
	{"bad-fstype.yaml", `bad-fstype.yaml:21: spec.localProvisioner.volumes[0].fsType: "btrfs"`, 1},
	{"bad-role.yaml", `bad-role.yaml:21: spec.localProvisioner.volumes[0].role: "block"`, 1},
	{"lvm-role.yaml", "lvm-role.yaml:22: spec.localProvisioner.volumes[0].role: must be pool", 1},
	{"lvm-volume-group.yaml", "lvm-volume-group.yaml:18: spec.localProvisioner.volumes[0].volumeGroup: required", 1},
	{"lvm-mount-path.yaml", "lvm-mount-path.yaml:23: spec.localProvisioner.volumes[0].mountPath: must be empty", 1},
	{"lvm-nodes-differ.yaml", "lvm-nodes-differ.yaml:28: spec.localProvisioner.volumes[1].volumeGroup:", 1},
	{"duplicate-volume-names.yaml", `duplicate-volume-names.yaml:21: spec.localProvisioner.volumes[1].name: volume "data" is already declared`, 1},
	{"even-control-planes.yaml", "even-control-planes.yaml:8: warning: spec.controlPlaneNodes: 2 control-plane nodes", 0},
	{"initial-cluster.yaml", "initial-cluster.yaml:14: warning: spec.initialCluster: ignored on create", 0},
	{"update-enums.yaml", `update-enums.yaml:7: spec.strategy: "all-at-once" is not one of`, 1},
	{"update-counts.hcl", "update-counts.hcl:6:3: max_unavailable: must be at least 1", 1},
	{"update-schema-order.hcl", "update-schema-order.hcl:6:3: min_compatible_reader: 60 is newer than previousSchemaVersion 59", 1},
	{"update-revs.hcl", `update-revs.hcl:4:3: flake_rev: "3f9c2a7" is not a full git SHA`, 1},
	{"update-nodes.yaml", "update-nodes.yaml:4: spec.nodes: required when allNodes is false", 1},
	{"unknown-field.yaml", `unknown-field.yaml:17: spec.highAvailability: unknown field "vipAdress", did you mean "vipAddress"?`, 1},
	{"unknown-kind.yaml", `unknown-kind.yaml:1: kind: unknown kind "KubernetesClusters", did you mean "KubernetesCluster"?`, 1},
	{"hcl-unknown-attribute.hcl", `hcl-unknown-attribute.hcl:9:5: control_plane_nodes[0]: unknown attribute "advertise_addr", did you mean "advertise_address"?`, 1},
	{"duplicate-across-files", `duplicate-across-files/b.hcl:1:37: name: KubernetesCluster "lab" is already declared at testdata/validate/cases/duplicate-across-files/a.yaml:3`, 1},
}

func TestKubernetesValidateGolden(t *testing.T) {
	listed := map[string]bool{}
	for _, tc := range validateCases {
		listed[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "validate", "cases", tc.name)
			out, stderr, code := execKctl(t, "kubernetes", "validate", "-f", path)
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if stderr != "" {
				t.Errorf("stderr: %q", stderr)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			golden(t, filepath.Join("validate", "golden", strings.TrimSuffix(tc.name, filepath.Ext(tc.name))+".txt"),
				fmt.Appendf(nil, "$ kctl kubernetes validate -f %s\n%s[exit %d]\n", path, out, code))
		})
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "validate", "cases"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("testdata/validate/cases/%s is not in validateCases", e.Name())
		}
	}
}

func TestKubernetesValidateExamples(t *testing.T) {
	out, stderr, code := execKctl(t, "kubernetes", "validate", "-f", "../../examples/")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q, output:\n%s", code, stderr, out)
	}
	if !strings.HasSuffix(out, "../../examples/: 7 documents valid (2 warnings)\n") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestKubernetesValidateSummaries(t *testing.T) {
	cases := filepath.Join("testdata", "validate", "cases")
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"several paths", []string{"-f", filepath.Join(cases, "valid.yaml"), "-f", filepath.Join(cases, "initial-cluster.yaml"), "-f", filepath.Join(cases, "update-counts.hcl")},
			"3 errors, 1 warning in 2 files\n", 1},
		{"same file twice", []string{"-f", filepath.Join(cases, "valid.yaml"), "--filename", filepath.Join(cases, "valid.yaml")},
			"testdata/validate/cases/valid.yaml, testdata/validate/cases/valid.yaml: 1 document valid\n", 0},
		{"missing file", []string{"-f", "testdata/validate/nope.yaml"},
			"testdata/validate/nope.yaml: read: no such file or directory\n1 error in 1 file\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, code := execKctl(t, append([]string{"kubernetes", "validate"}, tt.args...)...)
			if code != tt.code || !strings.HasSuffix(out, tt.want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d, ending:\n%s", code, out, tt.code, tt.want)
			}
		})
	}
}

func TestKubernetesValidateNeedsFilename(t *testing.T) {
	_, stderr, code := execKctl(t, "kubernetes", "validate")
	if code != 1 || !strings.Contains(stderr, `required flag(s) "filename" not set`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	out, _, code := execKctl(t, "kubernetes", "validate", "--help")
	if code != 0 || !strings.Contains(out, "kctl kubernetes validate -f examples/") || !strings.Contains(out, "-f, --filename") {
		t.Errorf("help:\n%s", out)
	}
}
