package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/volume"
)

func TestApplyPurgesOnlyVolumesKcoreCreated(t *testing.T) {
	const (
		name = "k8s-lab-node-11-data"
		dev  = "/dev/vg_kcore/" + name
		lvs  = "lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size vg_kcore"
	)
	v := api.VolumeOp{Name: name, Class: volume.ClassLVM, Pool: "vg_kcore", Device: dev, SizeBytes: 1 << 30,
		FSType: volume.FSExt4, Role: volume.RoleFilesystem, MountPath: "/mnt/kcore/lab/data"}
	tests := []struct {
		name     string
		existing bool // the LV was there before kcore: adopted, never deleted
		state    string
		message  string
		want     func(mnt string) []string
	}{
		{name: "created by kcore", state: api.ItemOK, message: "deleted",
			want: func(mnt string) []string {
				return []string{"findmnt -n -o SOURCE --mountpoint " + mnt, "umount " + mnt, "lvremove --yes " + dev}
			}},
		{name: "not created by kcore", existing: true, state: api.ItemFailed, message: volume.ErrNotOwned.Error(),
			want: func(string) []string { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			mnt := filepath.Join(root, v.MountPath)
			findmnt := "findmnt -n -o SOURCE --mountpoint " + mnt
			rec := execrun.NewRecorder()
			if tt.existing {
				rec.OnStdout(lvs, `{"report":[{"lv":[{"lv_name":"`+name+`","vg_name":"vg_kcore","lv_size":"1073741824"}]}]}`).
					OnStdout("blkid -o value -s TYPE "+dev, "ext4\n").OnStdout(findmnt, dev+"\n")
			} else {
				rec.OnStdout(lvs, `{"report":[{"lv":[]}]}`).OnExit("blkid -o value -s TYPE "+dev, 2, "").OnExit(findmnt, 1, "")
			}
			mgr := &volume.Manager{Runner: rec, StateDir: filepath.Join(root, "var/lib/kcore"),
				Resolve: func(p string) (string, error) { return MountPoint(root, p) }}
			a := &Applier{Root: root, Runtime: &fakeRuntime{}, Runner: rec, Volumes: mgr}
			ns := api.NodeState{Cluster: "lab", NodeID: "node-11", Generation: 1, Volumes: []api.VolumeOp{v}}
			if reps, err := a.Apply(ctx, []api.NodeState{ns}); err != nil || Pending(reps) {
				t.Fatalf("ensure: %v %+v", err, reps)
			}

			rec = execrun.NewRecorder().OnStdout(findmnt, dev+"\n")
			mgr.Runner, a.Runner = rec, rec
			teardown := api.NodeState{Cluster: "lab", NodeID: "node-11", Generation: 2, PurgeVolumes: []api.VolumeOp{v}}
			for pass := range 2 {
				reps, err := a.Apply(ctx, []api.NodeState{teardown})
				if err != nil {
					t.Fatal(err)
				}
				var items []api.ItemStatus
				for _, it := range reps[0].Items {
					if it.Kind == KindVolume {
						items = append(items, it)
					}
				}
				if len(items) != 1 || items[0].Name != name || items[0].State != tt.state || !strings.Contains(items[0].Message, tt.message) {
					t.Fatalf("pass %d: volume items %+v, want %s %q", pass, items, tt.state, tt.message)
				}
			}
			// The second pass finds the volume gone (or refuses again) and runs nothing more.
			if got, want := strings.Join(rec.Commands(), "\n"), strings.Join(tt.want(mnt), "\n"); got != want {
				t.Fatalf("commands\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestApplyRefusesPurgeOutsideTheAllowList(t *testing.T) {
	rec := execrun.NewRecorder()
	root := t.TempDir()
	a := &Applier{Root: root, Runtime: &fakeRuntime{}, Runner: rec,
		Volumes: &volume.Manager{Runner: rec, StateDir: filepath.Join(root, "var/lib/kcore")}}
	ns := api.NodeState{Cluster: "lab", NodeID: "node-11", Generation: 1, PurgeVolumes: []api.VolumeOp{{
		Name: "v", Class: volume.ClassLVM, Pool: "vg", SizeBytes: 1, Role: volume.RoleFilesystem, MountPath: "/home/data"}}}
	reps, err := a.Apply(context.Background(), []api.NodeState{ns})
	if err != nil || len(reps[0].Items) != 1 || reps[0].Items[0].State != api.ItemFailed {
		t.Fatalf("apply: %v %+v", err, reps)
	}
	if cmds := rec.Commands(); len(cmds) != 0 {
		t.Fatalf("ran %q", cmds)
	}
}
