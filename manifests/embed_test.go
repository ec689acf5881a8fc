package manifests

import (
	"errors"
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestManifestsParse renders every manifest and checks each document is YAML
// with an apiVersion and a kind.
func TestManifestsParse(t *testing.T) {
	rbac, err := BootstrapRBAC()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		render func() (string, error)
		want   []string
	}{
		{"provisioner", func() (string, error) {
			return LocalPathProvisioner(Provisioner{StorageClassName: "local-path", NodePaths: []NodePaths{{Node: "node-105", Paths: []string{"/mnt/kcore/lab/kcore-kdata"}}}})
		}, []string{"image: docker.io/rancher/local-path-provisioner:v0.0.30", `"node": "node-105"`, "name: local-path\nprovisioner: rancher.io/local-path"}},
		{"cilium-l2", func() (string, error) { return CiliumL2([]string{"192.168.40.220/29"}, []string{"enp6s0"}) }, []string{"- cidr: 192.168.40.220/29"}},
		{"coredns", func() (string, error) {
			return CoreDNS(DNS{ClusterIP: "10.96.0.10", ClusterDomain: "cluster.local", Replicas: 2})
		}, []string{"kubernetes cluster.local in-addr.arpa", "replicas: 2"}},
		{"kube-dns", func() (string, error) {
			return CoreDNSService(DNS{ClusterIP: "10.96.0.10"})
		}, []string{"kind: Service\nmetadata:\n  name: kube-dns\n  namespace: kube-system", "clusterIP: 10.96.0.10"}},
		{"rbac", func() (string, error) { return rbac, nil }, []string{"name: kube-apiserver-kubelet-client"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.render()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			dec := yaml.NewDecoder(strings.NewReader(out))
			for n := 0; ; n++ {
				var doc struct {
					APIVersion string `yaml:"apiVersion"`
					Kind       string `yaml:"kind"`
				}
				if err := dec.Decode(&doc); err != nil {
					if errors.Is(err, io.EOF) && n > 0 {
						break
					}
					t.Fatalf("document %d: %v", n, err)
				}
				if doc.APIVersion == "" || doc.Kind == "" {
					t.Fatalf("document %d has no apiVersion or kind", n)
				}
			}
		})
	}
}
