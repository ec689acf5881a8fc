package render

import (
	"errors"
	"io"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/pki"
)

// TestRBACBindsClusterAdmins: the group pki puts in kubeconfig certificates
// is the one the bootstrap RBAC binds to cluster-admin, so the name lives in
// pki and this test keeps the static manifest in step with it.
func TestRBACBindsClusterAdmins(t *testing.T) {
	rbac, err := manifests.BootstrapRBAC()
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(rbac))
	for {
		var doc struct {
			Kind    string `yaml:"kind"`
			RoleRef struct {
				Kind string `yaml:"kind"`
				Name string `yaml:"name"`
			} `yaml:"roleRef"`
			Subjects []struct {
				Kind string `yaml:"kind"`
				Name string `yaml:"name"`
			} `yaml:"subjects"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if doc.Kind != "ClusterRoleBinding" || doc.RoleRef.Kind != "ClusterRole" || doc.RoleRef.Name != "cluster-admin" {
			continue
		}
		for _, s := range doc.Subjects {
			if s.Kind == "Group" && s.Name == pki.ClusterAdminsGroup {
				return
			}
		}
	}
	t.Fatalf("the bootstrap RBAC binds no Group %q to cluster-admin", pki.ClusterAdminsGroup)
}
