package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kcore.dev/kcore/pkg/execrun"
)

func TestPurge(t *testing.T) {
	dev := "/dev/vg_kcore/" + name
	blkid := "blkid -o value -s TYPE " + dev
	tests := []struct {
		name    string
		mounted bool
		want    []string
	}{
		{name: "mounted", mounted: true, want: []string{"findmnt", "umount", "lvremove --yes " + dev}},
		{name: "not mounted", want: []string{"findmnt", "lvremove --yes " + dev}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			rec := execrun.NewRecorder()
			m, mnt := newManager(t, rec)
			mp := filepath.Join(mnt, "/mnt/kcore/lab/kcore-kdata")
			findmnt := "findmnt -n -o SOURCE --mountpoint " + mp
			rec.OnStdout(lvsCmd, lvsJSON(0)).OnExit(blkid, 2, "").OnExit(findmnt, 1, "")
			if _, err := m.Ensure(ctx, lvmOp(50*gib)); err != nil {
				t.Fatal(err)
			}
			rec = execrun.NewRecorder()
			if tt.mounted {
				rec.OnStdout(findmnt, dev+"\n")
			} else {
				rec.OnExit(findmnt, 1, "")
			}
			m.Runner = rec
			if err := m.Purge(ctx, lvmOp(50*gib)); err != nil {
				t.Fatal(err)
			}
			want := make([]string, len(tt.want))
			for i, c := range tt.want {
				switch c {
				case "findmnt":
					c = findmnt
				case "umount":
					c = "umount " + mp
				}
				want[i] = c
			}
			checkCommands(t, "purge", rec, want)
		})
	}
}

func TestPurgeRefusesForeignVolumes(t *testing.T) {
	ctx := context.Background()
	dev := "/dev/vg_kcore/" + name
	rec := execrun.NewRecorder().OnStdout(lvsCmd, lvsJSON(50*gib)).OnStdout("blkid -o value -s TYPE "+dev, "ext4\n")
	m, mnt := newManager(t, rec)
	rec.OnStdout("findmnt -n -o SOURCE --mountpoint "+filepath.Join(mnt, "/mnt/kcore/lab/kcore-kdata"), dev+"\n")
	if _, err := m.Ensure(ctx, lvmOp(50*gib)); err != nil {
		t.Fatal(err)
	}
	rec = execrun.NewRecorder()
	m.Runner = rec
	if err := m.Purge(ctx, lvmOp(50*gib)); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("purge of a volume kcore did not create: %v", err)
	}
	checkCommands(t, "purge foreign", rec, nil)
}

// TestRecordsReadBackAtTheirCap reads an ownership record of exactly
// MaxRecordsBytes and refuses one a byte longer.
func TestRecordsReadBackAtTheirCap(t *testing.T) {
	for _, extra := range []int{0, 1} {
		m := &Manager{StateDir: t.TempDir()}
		data := "{}" + strings.Repeat(" ", MaxRecordsBytes+extra-2)
		if err := os.WriteFile(filepath.Join(m.StateDir, recordsFile), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Records(); (err != nil) != (extra == 1) {
			t.Errorf("records %d bytes past the cap: %v", extra, err)
		}
	}
}
