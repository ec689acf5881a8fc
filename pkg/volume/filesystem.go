package volume

import (
	"context"
	"fmt"
	"os"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// Filesystem types.
const (
	FSExt4 = "ext4"
	FSXFS  = "xfs"
)

// Filesystem formats, mounts and grows filesystems on block devices.
type Filesystem struct {
	Runner execrun.Runner
}

// Label is the filesystem label for a volume: "kcore-" and six hex digits of
// its name's hash (fits both ext4's 16 and xfs's 12 characters).
func Label(name string) string { return api.VolumeLabel(name) }

// Type returns the filesystem type blkid finds on dev, "" when none.
func (f Filesystem) Type(ctx context.Context, dev string) (string, error) {
	res, err := f.Runner.Run(ctx, []string{"blkid", "-o", "value", "-s", "TYPE", dev})
	if execrun.ExitCode(err) == 2 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("probe %s: %w", dev, err)
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}

// EnsureFormatted makes a filesystem on dev only when blkid finds none; a
// device holding another type is refused (ErrFilesystemMismatch).
func (f Filesystem) EnsureFormatted(ctx context.Context, dev, fsType, label string) (bool, error) {
	have, err := f.Type(ctx, dev)
	if err != nil {
		return false, err
	}
	if have == fsType {
		return false, nil
	}
	if have != "" {
		return false, fmt.Errorf("format %s: %w: has %s, want %s", dev, ErrFilesystemMismatch, have, fsType)
	}
	var argv []string
	switch fsType {
	case FSExt4:
		argv = []string{"mkfs.ext4", "-q", "-L", label, dev}
	case FSXFS:
		argv = []string{"mkfs.xfs", "-q", "-L", label, dev}
	default:
		return false, fmt.Errorf("format %s: %w: filesystem %q", dev, ErrUnsupported, fsType)
	}
	if _, err := f.Runner.Run(ctx, argv); err != nil {
		return false, fmt.Errorf("format %s: %w", dev, err)
	}
	return true, nil
}

// EnsureMounted mounts dev at mountpoint (created when missing) unless
// something is mounted there already.
func (f Filesystem) EnsureMounted(ctx context.Context, dev, mountpoint string) (bool, error) {
	if err := os.MkdirAll(mountpoint, 0o755); err != nil {
		return false, fmt.Errorf("mount %s: %w", dev, err)
	}
	res, err := f.Runner.Run(ctx, []string{"findmnt", "-n", "-o", "SOURCE", "--mountpoint", mountpoint})
	if err == nil && strings.TrimSpace(string(res.Stdout)) != "" {
		return false, nil
	}
	if err != nil && execrun.ExitCode(err) != 1 {
		return false, fmt.Errorf("mount %s: %w", dev, err)
	}
	if _, err := f.Runner.Run(ctx, []string{"mount", dev, mountpoint}); err != nil {
		return false, fmt.Errorf("mount %s: %w", dev, err)
	}
	return true, nil
}

// Grow grows a mounted filesystem to its device's size: resize2fs <dev> for
// ext4, xfs_growfs <mountpoint> for xfs.
func (f Filesystem) Grow(ctx context.Context, fsType, dev, mountpoint string) error {
	var argv []string
	switch fsType {
	case FSExt4:
		argv = []string{"resize2fs", dev}
	case FSXFS:
		argv = []string{"xfs_growfs", mountpoint}
	default:
		return fmt.Errorf("grow %s: %w: filesystem %q", dev, ErrUnsupported, fsType)
	}
	if _, err := f.Runner.Run(ctx, argv); err != nil {
		return fmt.Errorf("grow %s: %w", dev, err)
	}
	return nil
}

// Unmount unmounts whatever is mounted at mountpoint; false when nothing was.
func (f Filesystem) Unmount(ctx context.Context, mountpoint string) (bool, error) {
	res, err := f.Runner.Run(ctx, []string{"findmnt", "-n", "-o", "SOURCE", "--mountpoint", mountpoint})
	if err != nil && execrun.ExitCode(err) != 1 {
		return false, fmt.Errorf("unmount %s: %w", mountpoint, err)
	}
	if err != nil || strings.TrimSpace(string(res.Stdout)) == "" {
		return false, nil
	}
	if _, err := f.Runner.Run(ctx, []string{"umount", mountpoint}); err != nil {
		return false, fmt.Errorf("unmount %s: %w", mountpoint, err)
	}
	return true, nil
}
