package volume

// This kernel has no device-mapper or ZFS, so the LVM and ZFS paths are
// tested by the exact command sequences they run through a Recorder; the
// filesystem path (mkfs, mount, grow) runs for real on a loop device in
// loop_test.go.

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

const (
	lvsCmd  = "lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size vg_kcore"
	zfsList = "zfs list -Hp -o name,volsize -t volume -r tank"
	name    = "k8s-lab-node-105-kcore-kdata"
	gib     = int64(1 << 30)
)

func lvsJSON(size int64) string {
	if size == 0 {
		return `{"report":[{"lv":[]}]}`
	}
	return `{"report":[{"lv":[{"lv_name":"` + name + `","vg_name":"vg_kcore","lv_size":"` + strconv.FormatInt(size, 10) + `"}]}]}`
}

func newManager(t *testing.T, rec *execrun.Recorder) (*Manager, string) {
	t.Helper()
	mntRoot := t.TempDir()
	return &Manager{
		Runner:   rec,
		StateDir: t.TempDir(),
		Resolve:  func(p string) (string, error) { return filepath.Join(mntRoot, p), nil },
	}, mntRoot
}

func lvmOp(size int64) api.VolumeOp {
	return api.VolumeOp{Name: name, Class: ClassLVM, Pool: "vg_kcore", Device: "/dev/vg_kcore/" + name,
		SizeBytes: size, FSType: FSExt4, Role: RoleFilesystem, MountPath: "/mnt/kcore/lab/kcore-kdata"}
}

func checkCommands(t *testing.T, step string, rec *execrun.Recorder, want []string) {
	t.Helper()
	if got := rec.Commands(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: commands\n  %s\nwant\n  %s", step, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestLVMLifecycle(t *testing.T) {
	ctx := context.Background()
	rec := execrun.NewRecorder()
	m, mnt := newManager(t, rec)
	dev := "/dev/vg_kcore/" + name
	mp := filepath.Join(mnt, "/mnt/kcore/lab/kcore-kdata")
	findmnt := "findmnt -n -o SOURCE --mountpoint " + mp
	blkid := "blkid -o value -s TYPE " + dev

	// Create: a blank LV is made, formatted and mounted.
	rec.OnStdout(lvsCmd, lvsJSON(0)).OnExit(blkid, 2, "").OnExit(findmnt, 1, "")
	out, err := m.Ensure(ctx, lvmOp(50*gib))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Created || !out.Formatted || !out.Mounted || out.Grown || out.FSGrown {
		t.Fatalf("create outcome %+v", out)
	}
	checkCommands(t, "create", rec, []string{
		lvsCmd,
		"lvcreate --yes -L 53687091200b -n " + name + " vg_kcore",
		"udevadm settle --timeout=30",
		blkid,
		"mkfs.ext4 -q -L " + Label(name) + " " + dev,
		findmnt,
		"mount " + dev + " " + mp,
	})

	// Steady state: only probes run.
	rec = execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(50*gib)).OnStdout(blkid, "ext4\n").OnStdout(findmnt, dev+"\n")
	m.Runner = rec
	if out, err := m.Ensure(ctx, lvmOp(50*gib)); err != nil || out.Changed() {
		t.Fatalf("steady state: %+v, %v", out, err)
	}
	checkCommands(t, "steady", rec, []string{lvsCmd, blkid, findmnt})

	// Grow: lvextend, then resize2fs once.
	rec = execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(50*gib)).OnStdout(blkid, "ext4\n").OnStdout(findmnt, dev+"\n")
	m.Runner = rec
	out, err = m.Ensure(ctx, lvmOp(60*gib))
	if err != nil || !out.Grown || !out.FSGrown {
		t.Fatalf("grow: %+v, %v", out, err)
	}
	checkCommands(t, "grow", rec, []string{lvsCmd, "lvextend -L 64424509440b " + dev, blkid, findmnt, "resize2fs " + dev})

	// Shrink: refused before any change.
	rec = execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(60*gib))
	m.Runner = rec
	if _, err := m.Ensure(ctx, lvmOp(40*gib)); !errors.Is(err, ErrShrink) {
		t.Fatalf("shrink: %v", err)
	}
	checkCommands(t, "shrink", rec, []string{lvsCmd})

	// Delete: kcore created it, so it may remove it.
	rec = execrun.NewRecorder()
	m.Runner = rec
	if err := m.Delete(ctx, lvmOp(60*gib)); err != nil {
		t.Fatal(err)
	}
	checkCommands(t, "delete", rec, []string{"lvremove --yes " + dev})
	if err := m.Delete(ctx, lvmOp(60*gib)); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestLVMAdoptsButNeverDeletesForeignVolumes(t *testing.T) {
	ctx := context.Background()
	dev := "/dev/vg_kcore/" + name
	rec := execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(50*gib)).OnStdout("blkid -o value -s TYPE "+dev, "ext4\n")
	m, mnt := newManager(t, rec)
	rec.OnStdout("findmnt -n -o SOURCE --mountpoint "+filepath.Join(mnt, "/mnt/kcore/lab/kcore-kdata"), dev+"\n")
	if out, err := m.Ensure(ctx, lvmOp(50*gib)); err != nil || out.Changed() {
		t.Fatalf("existing volume: %+v, %v", out, err)
	}
	if err := m.Delete(ctx, lvmOp(50*gib)); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("delete of a volume kcore did not create: %v", err)
	}
	for _, c := range rec.Commands() {
		if strings.HasPrefix(c, "lvremove") || strings.HasPrefix(c, "mkfs") {
			t.Fatalf("ran %q on a foreign volume", c)
		}
	}
}

func TestLVMRefusesAnotherFilesystem(t *testing.T) {
	dev := "/dev/vg_kcore/" + name
	rec := execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(50*gib)).OnStdout("blkid -o value -s TYPE "+dev, "xfs\n")
	m, _ := newManager(t, rec)
	if _, err := m.Ensure(context.Background(), lvmOp(50*gib)); !errors.Is(err, ErrFilesystemMismatch) {
		t.Fatalf("err = %v", err)
	}
}

func TestLVMThinPool(t *testing.T) {
	rec := execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(0))
	m, _ := newManager(t, rec)
	op := api.VolumeOp{Name: "kcore-kdata", Class: ClassLVM, Pool: "vg_kcore", SizeBytes: 50 * gib, Role: RolePool}
	out, err := m.Ensure(context.Background(), op)
	if err != nil || !out.Created || out.Formatted || out.Mounted {
		t.Fatalf("pool: %+v, %v", out, err)
	}
	checkCommands(t, "pool", rec, []string{lvsCmd, "lvcreate --yes --type thin-pool -L 53687091200b -n kcore-kdata vg_kcore", "udevadm settle --timeout=30"})
}

func TestZFSLifecycle(t *testing.T) {
	ctx := context.Background()
	op := api.VolumeOp{Name: name, Class: ClassZFS, Pool: "tank", SizeBytes: 50 * gib, FSType: FSXFS, Role: RoleFilesystem,
		MountPath: "/mnt/kcore/lab/kcore-kdata"}
	dev := "/dev/zvol/tank/" + name
	blkid := "blkid -o value -s TYPE " + dev
	rec := execrun.NewRecorder().OnStdout(zfsList, "tank/other\t1024\n").OnExit(blkid, 2, "")
	m, mnt := newManager(t, rec)
	mp := filepath.Join(mnt, op.MountPath)
	findmnt := "findmnt -n -o SOURCE --mountpoint " + mp
	rec.OnExit(findmnt, 1, "")
	if _, err := m.Ensure(ctx, op); err != nil {
		t.Fatal(err)
	}
	checkCommands(t, "create", rec, []string{
		zfsList, "zfs create -V 53687091200 tank/" + name, "udevadm settle --timeout=30",
		blkid, "mkfs.xfs -q -L " + Label(name) + " " + dev, findmnt, "mount " + dev + " " + mp,
	})
	rec = execrun.NewRecorder().OnStdout(zfsList, "tank/"+name+"\t53687091200\n").OnStdout(blkid, "xfs\n").OnStdout(findmnt, dev+"\n")
	m.Runner = rec
	op.SizeBytes = 60 * gib
	out, err := m.Ensure(ctx, op)
	if err != nil || !out.Grown || !out.FSGrown {
		t.Fatalf("grow: %+v, %v", out, err)
	}
	checkCommands(t, "grow", rec, []string{zfsList, "zfs set volsize=64424509440 tank/" + name, blkid, findmnt, "xfs_growfs " + mp})
	rec = execrun.NewRecorder()
	m.Runner = rec
	if err := m.Delete(ctx, op); err != nil {
		t.Fatal(err)
	}
	checkCommands(t, "delete", rec, []string{"zfs destroy tank/" + name})
}

func TestEnsureRejectsBadOps(t *testing.T) {
	tests := []struct {
		name string
		op   api.VolumeOp
	}{
		{name: "no size", op: api.VolumeOp{Name: "v", Class: ClassLVM, Pool: "vg"}},
		{name: "unknown class", op: api.VolumeOp{Name: "v", Class: "ceph", Pool: "p", SizeBytes: 1}},
		{name: "zfs pool role", op: api.VolumeOp{Name: "v", Class: ClassZFS, Pool: "p", SizeBytes: 1, Role: RolePool}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := execrun.NewRecorder()
			m, _ := newManager(t, rec)
			if _, err := m.Ensure(context.Background(), tt.op); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v", err)
			}
			if len(rec.Commands()) != 0 {
				t.Fatalf("ran %q", rec.Commands())
			}
		})
	}
}

func TestBackends(t *testing.T) {
	vgs := "vgs --reportformat json --units b --nosuffix -o vg_name,vg_size,vg_free"
	zpool := "zpool list -Hp -o name,size,free"
	tests := []struct {
		name string
		rec  *execrun.Recorder
		want string
	}{
		{name: "both", rec: execrun.NewRecorder().
			OnStdout(vgs, `{"report":[{"vg":[{"vg_name":"vg_kcore","vg_size":"107374182400","vg_free":"53687091200"}]}]}`).
			OnStdout(zpool, "tank\t1000000\t400000\n"),
			want: "lvm/vg_kcore/107374182400/53687091200 zfs/tank/1000000/400000"},
		{name: "tools absent", rec: execrun.NewRecorder().Missing("vgs").Missing("zpool"), want: ""},
		{name: "suffixed sizes", rec: execrun.NewRecorder().Missing("zpool").
			OnStdout(vgs, `{"report":[{"vg":[{"vg_name":"vg0","vg_size":"4096B","vg_free":"0B"}]}]}`),
			want: "lvm/vg0/4096/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Backends(context.Background(), tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, b := range got {
				parts = append(parts, b.Class+"/"+b.Name+"/"+strconv.FormatInt(b.SizeBytes, 10)+"/"+strconv.FormatInt(b.FreeBytes, 10))
			}
			if strings.Join(parts, " ") != tt.want {
				t.Fatalf("backends = %q, want %q", strings.Join(parts, " "), tt.want)
			}
		})
	}
	if _, err := ParseZpools([]byte("broken line")); err == nil {
		t.Fatal("broken zpool output parsed")
	}
}
