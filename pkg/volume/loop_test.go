package volume

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"kcore.dev/kcore/pkg/execrun"
)

// TestFilesystemOnLoopDevice runs the real mkfs, mount and grow path on a
// loop device backed by a sparse file.
func TestFilesystemOnLoopDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: loop devices, mkfs and mount need root; run the tests as root to cover the real filesystem path")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "resize2fs", "blkid", "findmnt", "mount", "umount"} {
		if _, err := execrun.LookPath(tool, nil); err != nil {
			t.Skipf("SKIP: %s is not installed", tool)
		}
	}
	ctx := context.Background()
	run := execrun.Exec{}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	res, err := run.Run(ctx, []string{"losetup", "--find", "--show", img})
	if err != nil {
		t.Skipf("SKIP: no loop device available: %v", err)
	}
	dev := strings.TrimSpace(string(res.Stdout))
	mnt := filepath.Join(t.TempDir(), "mnt")
	t.Cleanup(func() {
		run.Run(context.Background(), []string{"umount", mnt})
		run.Run(context.Background(), []string{"losetup", "-d", dev})
	})

	fs := Filesystem{Runner: run}
	formatted, err := fs.EnsureFormatted(ctx, dev, FSExt4, Label("k8s-lab-node-105-kcore-kdata"))
	if err != nil || !formatted {
		t.Fatalf("format: %v, %v", formatted, err)
	}
	if formatted, err := fs.EnsureFormatted(ctx, dev, FSExt4, "x"); err != nil || formatted {
		t.Fatalf("second format: formatted=%v err=%v (must leave an existing filesystem alone)", formatted, err)
	}
	if mounted, err := fs.EnsureMounted(ctx, dev, mnt); err != nil || !mounted {
		t.Fatalf("mount: %v, %v", mounted, err)
	}
	if mounted, err := fs.EnsureMounted(ctx, dev, mnt); err != nil || mounted {
		t.Fatalf("second mount: %v, %v", mounted, err)
	}
	before := fsSize(t, mnt)
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Run(ctx, []string{"losetup", "-c", dev}); err != nil {
		t.Fatal(err)
	}
	if hasCapSysResource(t) {
		if err := fs.Grow(ctx, FSExt4, dev, mnt); err != nil {
			t.Fatal(err)
		}
	} else {
		// ext4 online resize needs CAP_SYS_RESOURCE, which this sandbox
		// withholds: grow the same filesystem offline instead.
		t.Log("no CAP_SYS_RESOURCE: growing the filesystem offline (umount, e2fsck, resize2fs, mount)")
		for _, argv := range [][]string{{"umount", mnt}, {"e2fsck", "-f", "-p", dev}} {
			if _, err := run.Run(ctx, argv); err != nil {
				t.Fatal(err)
			}
		}
		if err := fs.Grow(ctx, FSExt4, dev, mnt); err != nil {
			t.Fatal(err)
		}
		if mounted, err := fs.EnsureMounted(ctx, dev, mnt); err != nil || !mounted {
			t.Fatalf("remount: %v, %v", mounted, err)
		}
	}
	after := fsSize(t, mnt)
	if after <= before {
		t.Fatalf("filesystem did not grow: %d -> %d bytes", before, after)
	}
	if after < 100<<20 {
		t.Fatalf("grown filesystem is %d bytes, want about 128 MiB", after)
	}
}

// hasCapSysResource reports whether this process holds CAP_SYS_RESOURCE (bit 24).
func hasCapSysResource(t *testing.T) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<24) != 0
		}
	}
	return false
}

func fsSize(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * uint64(st.Bsize)
}
