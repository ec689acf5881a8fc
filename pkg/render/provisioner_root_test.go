package render

import (
	"strings"
	"testing"
)

// TestLabProvisionerPathsUnderTheAgentRoot: in the lab profile a node whose
// facts report an agent root gets its provisioner directories under that
// root (kubelet resolves hostPath volumes on the shared machine, where the
// agent mounted the volume under its root); the default profile ignores the
// fact, and a node without one keeps the path as written.
func TestLabProvisionerPathsUnderTheAgentRoot(t *testing.T) {
	c := loadCluster(t, "lab")
	nodes := testFacts()
	nodes["node-105"].Facts.Root = "/var/lib/kcore-lab/n1"
	const path = "/mnt/kcore/lab/kcore-kdata"
	for profile, want := range map[Profile][]string{
		ProfileLab:     {`"/var/lib/kcore-lab/n1` + path + `"`, `"` + path + `"`},
		ProfileDefault: {`"` + path + `"`},
	} {
		states, err := Render(c, fakeSecrets(c), nodes, Options{Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		f := fileByPath(states["node-105"], ProvisionerPath)
		if f == nil {
			t.Fatalf("profile %q: no %s", profile, ProvisionerPath)
		}
		for _, w := range want {
			if !strings.Contains(f.Content, w) {
				t.Errorf("profile %q: provisioner lacks %s:\n%s", profile, w, f.Content)
			}
		}
		if profile == ProfileDefault && strings.Contains(f.Content, "kcore-lab") {
			t.Errorf("the default profile used the agent root:\n%s", f.Content)
		}
	}
}
