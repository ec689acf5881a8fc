package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// TestResolveDiskRefusals checks that a by-id name leads only to a block
// device under /dev, read as one link in the by-id directory, and that
// nothing runs for a disk that cannot be resolved.
func TestResolveDiskRefusals(t *testing.T) {
	byID := t.TempDir()
	outside := t.TempDir()
	links := map[string]string{
		"ata-GONE":      "/dev/kcore-no-such-disk",
		"ata-OUTSIDE":   filepath.Join(outside, "disk"),
		"ata-ESCAPE":    "../../../etc/passwd",
		"ata-CHARDEV":   "/dev/null",
		"ata-RELATIVE":  "../../null",
		"ata-DIRECTORY": "/dev",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(byID, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(byID, "ata-FILE"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		disk string
		want error
	}{
		{disk: "/dev/disk/by-id/ata-ABSENT", want: ErrDiskMissing},
		{disk: "/dev/disk/by-id/ata-GONE", want: ErrDiskMissing},
		{disk: "/dev/disk/by-id/ata-OUTSIDE", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/ata-ESCAPE", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/ata-CHARDEV", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/ata-RELATIVE", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/ata-DIRECTORY", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/ata-FILE", want: ErrUnsupported},
		{disk: "/dev/sda", want: ErrUnsupported},
		{disk: "/dev/disk/by-id/../by-path/x", want: ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.disk, func(t *testing.T) {
			rec := execrun.NewRecorder()
			m := &Manager{Runner: rec, StateDir: t.TempDir(), ByIDDir: byID}
			if _, err := m.ResolveDisk(tt.disk); !errors.Is(err, tt.want) {
				t.Fatalf("resolve: %v, want %v", err, tt.want)
			}
			op := api.VolumeOp{Name: "v", Class: ClassDisk, Device: tt.disk, FSType: FSXFS, MountPath: "/mnt/kcore/x/v"}
			if _, err := m.Ensure(context.Background(), op); !errors.Is(err, tt.want) {
				t.Fatalf("ensure: %v, want %v", err, tt.want)
			}
			if len(rec.Commands()) != 0 {
				t.Fatalf("ran %q for a disk that does not resolve", rec.Commands())
			}
		})
	}
}

func TestParseSignature(t *testing.T) {
	tests := []struct {
		out  string
		want Signature
	}{
		{out: "DEVNAME=/dev/loop3\nUUID=1f2e\nTYPE=xfs\nLABEL=kcore-abc123\nUSAGE=filesystem\n", want: Signature{Type: "xfs", Label: "kcore-abc123", UUID: "1f2e"}},
		{out: "DEVNAME=/dev/sdb\nPTUUID=77\nPTTYPE=gpt\n", want: Signature{PartitionTable: "gpt"}},
		{out: "", want: Signature{}},
	}
	for _, tt := range tests {
		if got := ParseSignature([]byte(tt.out)); got != tt.want {
			t.Errorf("parse %q = %+v, want %+v", tt.out, got, tt.want)
		}
	}
	if !(Signature{}).Empty() || (Signature{PartitionTable: "dos"}).Empty() {
		t.Fatal("Empty is wrong")
	}
}

func TestLabelIsTheAPIVolumeLabel(t *testing.T) {
	if Label(name) != api.VolumeLabel(name) || len(Label(name)) > 12 {
		t.Fatalf("label %q", Label(name))
	}
}
