package render

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders each fixture with fake secrets and compares every file
// (under testdata/golden/<case>/<node>/files/) and a summary of units, tasks,
// volumes and file modes (state.txt) with the golden copies.
func TestGolden(t *testing.T) {
	tests := []struct {
		name    string
		cluster string
		opts    Options
	}{
		{"lab", "lab", Options{KubernetesVersion: "1.37.0"}},
		{"lab-ha3", "lab-ha3", Options{KubernetesVersion: "1.37.0"}},
		{"lab-ha3-etcd-restoring", "lab-ha3-restoring", Options{KubernetesVersion: "1.37.0", EtcdRestoreSnapshot: []byte("fake etcd snapshot")}},
		{"lab-ha3-etcd-restored", "lab-ha3-restored", Options{KubernetesVersion: "1.37.0"}},
		{"single-lab-profile", "single", Options{KubernetesVersion: "1.37.0", Profile: ProfileLab}},
		{"extra-args", "extra-args", Options{KubernetesVersion: "1.37.0"}},
		{"bridge", "bridge", Options{KubernetesVersion: "1.37.0"}},
		{"lvm", "lvm", Options{KubernetesVersion: "1.37.0", CgroupDriver: "cgroupfs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, states := renderCase(t, tt.cluster, tt.opts)
			got := map[string]string{}
			for id, ns := range states {
				got[filepath.Join(id, "state.txt")] = summary(ns)
				for _, f := range ns.Files {
					got[filepath.Join(id, "files", strings.TrimPrefix(f.Path, "/"))] = f.Content
				}
			}
			dir := filepath.Join("testdata", "golden", tt.name)
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				for rel, content := range got {
					p := filepath.Join(dir, rel)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := readTree(t, dir)
			for rel, content := range got {
				w, ok := want[rel]
				if !ok {
					t.Errorf("%s: rendered but not in golden files (run go test -update)", rel)
					continue
				}
				if w != content {
					t.Errorf("%s differs from golden (run go test -update to accept):\n--- got\n%s\n--- want\n%s", rel, content, w)
				}
			}
			for rel := range want {
				if _, ok := got[rel]; !ok {
					t.Errorf("%s: golden file no longer rendered", rel)
				}
			}
		})
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out[rel] = string(raw)
		return err
	})
	if err != nil {
		t.Fatalf("read golden %s: %v", dir, err)
	}
	return out
}

// summary is a readable listing of a NodeState: files with mode and secrecy,
// units and tasks with argv and dependencies, volumes.
func summary(ns *api.NodeState) string {
	var w strings.Builder
	fmt.Fprintf(&w, "cluster %s node %s hash %s\n", ns.Cluster, ns.NodeID, Hash(ns))
	w.WriteString("\nfiles:\n")
	for _, f := range ns.Files {
		secret := ""
		if f.Secret {
			secret = " secret"
		}
		fmt.Fprintf(&w, "  %04o %s%s\n", f.Mode, f.Path, secret)
	}
	for _, u := range ns.Units {
		fmt.Fprintf(&w, "\nunit %s\n", u.Name)
		fmt.Fprintf(&w, "  restart: %s oneshot: %t\n", u.Restart, u.Oneshot)
		if len(u.After) > 0 {
			fmt.Fprintf(&w, "  after: %s\n", strings.Join(u.After, " "))
		}
		if u.HealthURL != "" {
			fmt.Fprintf(&w, "  health: %s\n", u.HealthURL)
		}
		if u.KillMode != "" {
			fmt.Fprintf(&w, "  killMode: %s\n", u.KillMode)
		}
		if u.CRIEndpoint != "" {
			fmt.Fprintf(&w, "  criEndpoint: %s\n", u.CRIEndpoint)
		}
		keys := make([]string, 0, len(u.Env))
		for k := range u.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&w, "  env: %s=%s\n", k, u.Env[k])
		}
		writeArgv(&w, u.Argv)
		fmt.Fprintf(&w, "  inputHash: %s\n", u.InputHash)
		if u.ReloadHash != "" {
			fmt.Fprintf(&w, "  reloadHash: %s\n", u.ReloadHash)
		}
	}
	for _, tk := range ns.Tasks {
		fmt.Fprintf(&w, "\ntask %s\n", tk.Name)
		if len(tk.After) > 0 {
			fmt.Fprintf(&w, "  after: %s\n", strings.Join(tk.After, " "))
		}
		writeArgv(&w, tk.Argv)
		fmt.Fprintf(&w, "  inputHash: %s\n", tk.InputHash)
	}
	for _, v := range ns.Volumes {
		fmt.Fprintf(&w, "\nvolume %s\n  class: %s pool: %s device: %s\n  size: %d role: %s fs: %s mount: %s\n",
			v.Name, v.Class, v.Pool, v.Device, v.SizeBytes, v.Role, v.FSType, v.MountPath)
	}
	return w.String()
}

func writeArgv(w *strings.Builder, argv []string) {
	w.WriteString("  argv:\n")
	for _, a := range slices.Clone(argv) {
		fmt.Fprintf(w, "    %s\n", a)
	}
}
