package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// maxTestLoops bounds the loop devices one test attaches.
const maxTestLoops = 2

// loopSize is a test disk's size: mkfs.xfs wants at least 300 MiB; the
// backing files are sparse.
const loopSize = 320 << 20

// loopDisks attaches loop devices as test disks and links each from a by-id
// directory of the test's own, as udev links a real disk from
// /dev/disk/by-id. Every device is detached and every mount unmounted when
// the test ends, whether it passed or not.
type loopDisks struct {
	t    *testing.T
	run  execrun.Exec
	byID string
	n    int
}

func newLoopDisks(t *testing.T) *loopDisks {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: loop devices, mkfs and mount need root; run the tests as root to cover the raw disk path")
	}
	for _, tool := range []string{"losetup", "mkfs.xfs", "mkfs.ext4", "xfs_growfs", "blkid", "blockdev", "wipefs", "findmnt", "mount", "umount"} {
		if _, err := execrun.LookPath(tool, nil); err != nil {
			t.Skipf("SKIP: %s is not installed", tool)
		}
	}
	return &loopDisks{t: t, byID: t.TempDir()}
}

// attach makes a sparse backing file, attaches it and links it as by-id
// name id; it returns the backing file and the device.
func (l *loopDisks) attach(id string) (string, string) {
	l.t.Helper()
	if l.n == maxTestLoops {
		l.t.Fatalf("a test attaches at most %d loop devices", maxTestLoops)
	}
	img := filepath.Join(l.t.TempDir(), id+".img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		l.t.Fatal(err)
	}
	if err := os.Truncate(img, loopSize); err != nil {
		l.t.Fatal(err)
	}
	res, err := l.run.Run(context.Background(), []string{"losetup", "--find", "--show", img})
	if err != nil {
		l.t.Skipf("SKIP: no loop device available: %v", err)
	}
	l.n++
	dev := strings.TrimSpace(string(res.Stdout))
	l.t.Cleanup(func() { l.run.Run(context.Background(), []string{"losetup", "-d", dev}) })
	if err := os.Symlink(dev, filepath.Join(l.byID, id)); err != nil {
		l.t.Fatal(err)
	}
	return img, dev
}

// manager is a volume manager resolving by-id names in l's directory,
// with mounts under mntRoot, unmounted at the end of the test.
func (l *loopDisks) manager(stateDir, mntRoot, mountPath string) *Manager {
	l.t.Cleanup(func() { l.run.Run(context.Background(), []string{"umount", filepath.Join(mntRoot, mountPath)}) })
	return &Manager{
		Runner: l.run, StateDir: stateDir, ByIDDir: l.byID,
		Resolve: func(p string) (string, error) { return filepath.Join(mntRoot, p), nil },
	}
}

func diskOp(id string) api.VolumeOp {
	return api.VolumeOp{Name: "k8s-lab-lab-n1-data", Class: ClassDisk, Device: api.DiskByIDDir + "/" + id,
		FSType: FSXFS, Role: RoleFilesystem, MountPath: "/mnt/kcore/lab/data"}
}

// TestDiskOnLoopDevice takes a blank disk through its life: formatted and
// mounted, left alone when nothing changed, mounted again after a restart
// without being formatted, grown after the disk grew, and purged.
func TestDiskOnLoopDevice(t *testing.T) {
	l := newLoopDisks(t)
	ctx := context.Background()
	img, dev := l.attach("ata-KCORE_TEST_1")
	state, mntRoot := t.TempDir(), t.TempDir()
	op := diskOp("ata-KCORE_TEST_1")
	mnt := filepath.Join(mntRoot, op.MountPath)
	m := l.manager(state, mntRoot, op.MountPath)

	out, err := m.Ensure(ctx, op)
	if err != nil || !out.Formatted || !out.Mounted || out.FSGrown {
		t.Fatalf("create: %+v, %v", out, err)
	}
	if sig, err := Probe(ctx, l.run, dev); err != nil || sig.Type != FSXFS || sig.Label != Label(op.Name) {
		t.Fatalf("after create the disk holds %+v (%v)", sig, err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "data"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := m.Ensure(ctx, op); err != nil || out.Changed() {
		t.Fatalf("steady state: %+v, %v", out, err)
	}

	// Restart: the machine rebooted (nothing mounted), a new agent runs.
	if _, err := l.run.Run(ctx, []string{"umount", mnt}); err != nil {
		t.Fatal(err)
	}
	m = l.manager(state, mntRoot, op.MountPath)
	out, err = m.Ensure(ctx, op)
	if err != nil || out.Formatted || !out.Mounted {
		t.Fatalf("after restart: %+v, %v", out, err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "data")); err != nil || string(got) != "kept" {
		t.Fatalf("after restart the volume holds %q (%v)", got, err)
	}

	// Grow: the disk grew (the backing file, then the loop device).
	before := fsSize(t, mnt)
	if err := os.Truncate(img, loopSize+128<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := l.run.Run(ctx, []string{"losetup", "-c", dev}); err != nil {
		t.Fatal(err)
	}
	out, err = m.Ensure(ctx, op)
	if err != nil || !out.FSGrown || out.Formatted {
		t.Fatalf("grow: %+v, %v", out, err)
	}
	if after := fsSize(t, mnt); after < before+100<<20 {
		t.Fatalf("filesystem did not grow with the disk: %d -> %d bytes", before, after)
	}
	if out, err := m.Ensure(ctx, op); err != nil || out.Changed() {
		t.Fatalf("steady state after grow: %+v, %v", out, err)
	}

	// Purge: unmounted, signatures wiped, record gone.
	if err := m.Purge(ctx, op); err != nil {
		t.Fatal(err)
	}
	if targets, err := mountTargets(ctx, l.run, dev); err != nil || len(targets) != 0 {
		t.Fatalf("after purge the disk is mounted at %v (%v)", targets, err)
	}
	if sig, err := Probe(ctx, l.run, dev); err != nil || !sig.Empty() {
		t.Fatalf("after purge the disk holds %+v (%v)", sig, err)
	}
	if recs, err := m.Records(); err != nil || len(recs) != 0 {
		t.Fatalf("after purge the records hold %v (%v)", recs, err)
	}
}

// TestDiskRefusesForeignData leaves a disk holding another filesystem
// alone: not formatted, not mounted, not purged, its data intact.
func TestDiskRefusesForeignData(t *testing.T) {
	l := newLoopDisks(t)
	ctx := context.Background()
	_, dev := l.attach("ata-KCORE_TEST_FOREIGN")
	if _, err := l.run.Run(ctx, []string{"mkfs.ext4", "-q", "-L", "photos", dev}); err != nil {
		t.Fatal(err)
	}
	state, mntRoot := t.TempDir(), t.TempDir()
	op := diskOp("ata-KCORE_TEST_FOREIGN")
	m := l.manager(state, mntRoot, op.MountPath)
	for _, fsType := range []string{FSXFS, FSExt4} {
		op.FSType = fsType
		if _, err := m.Ensure(ctx, op); !errors.Is(err, ErrForeignData) {
			t.Fatalf("ensure %s over a foreign ext4 filesystem: %v", fsType, err)
		}
	}
	if targets, _ := mountTargets(ctx, l.run, dev); len(targets) != 0 {
		t.Fatalf("a foreign disk got mounted at %v", targets)
	}
	if err := m.Purge(ctx, op); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("purge of a foreign disk: %v", err)
	}
	if sig, err := Probe(ctx, l.run, dev); err != nil || sig.Type != FSExt4 || sig.Label != "photos" {
		t.Fatalf("the foreign filesystem became %+v (%v)", sig, err)
	}

	// A filesystem that carries kcore's label but is not the one kcore
	// recorded for this volume is refused too.
	_, dev2 := l.attach("ata-KCORE_TEST_2")
	op2 := diskOp("ata-KCORE_TEST_2")
	op2.MountPath = "/mnt/kcore/lab/data2"
	m2 := l.manager(state, mntRoot, op2.MountPath)
	if _, err := m2.Ensure(ctx, op2); err != nil {
		t.Fatal(err)
	}
	if _, err := (Filesystem{Runner: l.run}).Unmount(ctx, filepath.Join(mntRoot, op2.MountPath)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.run.Run(ctx, []string{"mkfs.xfs", "-q", "-f", "-L", Label(op2.Name), dev2}); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ensure(ctx, op2); !errors.Is(err, ErrForeignData) {
		t.Fatalf("ensure over a look-alike filesystem: %v", err)
	}
	if err := m2.Purge(ctx, op2); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("purge of a look-alike filesystem: %v", err)
	}
}
