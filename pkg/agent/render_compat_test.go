package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/pki"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/volume"
)

// TestAppliesRenderedClusters applies what pkg/render produces for its
// fixture clusters (real certificates): every path passes the allow-list,
// every file lands with its mode, every volume, unit and task is handled.
func TestAppliesRenderedClusters(t *testing.T) {
	for _, name := range []string{"lab", "bridge", "lvm", "single"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "render", "testdata", "clusters", name+".yaml"))
			if err != nil {
				t.Skipf("SKIP: render fixture %s: %v", name, err)
			}
			var c api.KubernetesCluster
			if err := yaml.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			c.Default()
			secrets, err := pki.IssueClusterSecrets(&c, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			nodes := map[string]*api.Node{}
			for _, m := range c.Spec.Members() {
				nodes[m.NodeID] = &api.Node{Kind: api.KindNode, Metadata: api.ObjectMeta{Name: m.NodeID}, Facts: api.NodeFacts{
					Storage: []api.StorageBackend{
						{Class: "lvm", Name: "vg_kcore", SizeBytes: 1 << 40, FreeBytes: 1 << 39},
						{Class: "lvm", Name: "vg_data", SizeBytes: 1 << 40, FreeBytes: 1 << 39},
						{Class: "zfs", Name: "tank", SizeBytes: 1 << 40, FreeBytes: 1 << 39},
					}}}
			}
			states, err := render.Render(&c, secrets, nodes, render.Options{})
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			for node, ns := range states {
				root := t.TempDir()
				rec := execrun.NewRecorder()
				for _, v := range ns.Volumes {
					// No volume exists yet and no device holds a filesystem.
					rec.OnExit("blkid -o value -s TYPE "+volume.Device(v), 2, "")
					rec.OnExit("findmnt -n -o SOURCE --mountpoint "+filepath.Join(root, v.MountPath), 1, "")
					rec.OnStdout("zfs list -Hp -o name,volsize -t volume -r "+v.Pool, "")
					rec.OnStdout("lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size "+v.Pool, `{"report":[{"lv":[]}]}`)
				}
				a := &Applier{
					Root: root, Runtime: &fakeRuntime{}, Runner: rec,
					Volumes: &volume.Manager{Runner: rec, StateDir: filepath.Join(root, "var/lib/kcore"),
						Resolve: func(p string) (string, error) { return MountPoint(root, p) }},
					Health: func(context.Context, string) error { return nil },
					Rebase: func(ns *api.NodeState) *api.NodeState { return render.Rebase(ns, root) },
				}
				reps := applyUntilSettled(t, a, *ns)
				if reps[0].ObservedGeneration != ns.Generation {
					t.Fatalf("%s: observed generation %d", node, reps[0].ObservedGeneration)
				}
				rebased := render.Rebase(ns, root)
				for _, f := range rebased.Files {
					st, err := os.Stat(filepath.Join(root, f.Path))
					if err != nil {
						t.Fatalf("%s: %v", node, err)
					}
					if st.Mode().Perm() != fileMode(f) {
						t.Errorf("%s %s: mode %o, want %o", node, f.Path, st.Mode().Perm(), fileMode(f))
					}
					if data, _ := os.ReadFile(filepath.Join(root, f.Path)); string(data) != f.Content {
						t.Errorf("%s %s: content differs from the rebased render", node, f.Path)
					}
				}
			}
		})
	}
}
