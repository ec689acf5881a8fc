package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/manifest"
)

// runKctl runs kctl with args against buffers and returns stdout and the error.
func runKctl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := NewKctl(Streams{In: strings.NewReader(""), Out: &stdout, Err: &stderr})
	root.SetArgs(args)
	err := root.Execute()
	return stdout.String(), err
}

func TestExplainGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"kind", []string{"KubernetesCluster"}},
		{"kind-alias-recursive", []string{"kubernetes-cluster", "--recursive"}},
		{"high-availability", []string{"KubernetesCluster.spec.highAvailability"}},
		{"lowercase-underscore-alias", []string{"kubernetes_cluster.spec.highAvailability.healthCheck"}},
		{"enum-leaf", []string{"KubernetesCluster.spec.cni"}},
		{"list-elements", []string{"KubernetesCluster.spec.localProvisioner.volumes"}},
		{"list-index", []string{"KubernetesCluster.spec.localProvisioner.volumes[0].sizeBytes"}},
		{"spec-recursive", []string{"KubernetesCluster.spec", "--recursive"}},
		{"update-tested-os-pins", []string{"ClusterUpdate.spec.testedOsPins"}},
		{"update-spec", []string{"clusterupdate.spec"}},
		{"node-facts", []string{"Node.facts"}},
		{"nodestate-units", []string{"NodeState.units"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runKctl(t, append([]string{"explain"}, tt.args...)...)
			if err != nil {
				t.Fatalf("kctl explain %v: %v", tt.args, err)
			}
			golden(t, "explain/"+tt.name+".golden", []byte(out))
		})
	}
}

func TestExplainErrors(t *testing.T) {
	tests := []struct {
		path    string
		want    error
		message string
	}{
		{"KubernetesCluster.spec.highAvailabilty", ErrUnknownField, `explain KubernetesCluster.spec.highAvailabilty: unknown field "highAvailabilty" in spec; did you mean "highAvailability"?`},
		{"KubernetesCluster.spek", ErrUnknownField, `explain KubernetesCluster.spek: unknown field "spek" in KubernetesCluster; did you mean "spec"?`},
		{"KubernetesCluster.spec.controlPlaneNodes.ifac", ErrUnknownField, `explain KubernetesCluster.spec.controlPlaneNodes.ifac: unknown field "ifac" in spec.controlPlaneNodes; did you mean "iface"?`},
		{"ClusterUpdate.spec.tested_os_pins", ErrUnknownField, `explain ClusterUpdate.spec.tested_os_pins: unknown field "tested_os_pins" in spec; did you mean "testedOsPins"?`},
		{"KubernetesCluster.spec.cni.name", ErrUnknownField, `explain KubernetesCluster.spec.cni.name: unknown field: spec.cni is a string and has no field "name"`},
		{"KubernetesCluster.metadata.labels.app", ErrUnknownField, `explain KubernetesCluster.metadata.labels.app: unknown field: metadata.labels is a map[string]string and has no field "app"`},
		{"Cluster.spec", ErrUnknownKind, `explain Cluster.spec: unknown kind "Cluster": known kinds are ClusterUpdate, GitSource, KubernetesCluster, Node, NodeState`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			out, err := runKctl(t, "explain", tt.path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err.Error() != tt.message {
				t.Errorf("message\n got %s\nwant %s", err, tt.message)
			}
			if out != "" {
				t.Errorf("printed output on error:\n%s", out)
			}
		})
	}
}

func TestExplainNeedsOneArgument(t *testing.T) {
	for _, args := range [][]string{{"explain"}, {"explain", "KubernetesCluster", "ClusterUpdate"}} {
		if _, err := runKctl(t, args...); err == nil {
			t.Errorf("kctl %v: want an error", args)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"spek", "spec", 1},
		{"highavailabilty", "highavailability", 1},
		{"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if _, got := manifest.Closest(tt.a, []string{tt.b}); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
