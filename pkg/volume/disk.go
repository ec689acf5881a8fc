package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/execrun"
)

// ClassDisk is a whole raw disk named by /dev/disk/by-id: no volume is
// created, the disk itself is formatted, mounted and grown.
const ClassDisk = "disk"

// ErrDiskMissing is a by-id name that names no block device on this machine.
var ErrDiskMissing = errors.New("disk not found")

// ErrForeignData refuses a disk that holds a filesystem, partition table or
// other signature kcore did not write for this volume.
var ErrForeignData = errors.New("disk holds data kcore did not write")

// ErrDiskInUse refuses a disk mounted somewhere other than its volume's mount point.
var ErrDiskInUse = errors.New("disk in use")

// Signature is what blkid's low-level probe finds on a device.
type Signature struct {
	// Type is the filesystem or other signature type (ext4, xfs, LVM2_member, …).
	Type string
	// Label and UUID are the filesystem's.
	Label, UUID string
	// PartitionTable is gpt, dos, … when the device holds a partition table.
	PartitionTable string
}

// Empty reports whether blkid found nothing at all.
func (s Signature) Empty() bool { return s == Signature{} }

// String describes the signature for messages.
func (s Signature) String() string {
	switch {
	case s.PartitionTable != "":
		return "a " + s.PartitionTable + " partition table"
	case s.Label != "":
		return fmt.Sprintf("a %s filesystem labelled %q", s.Type, s.Label)
	case s.Type != "":
		return "a " + s.Type + " signature"
	}
	return "nothing"
}

// ParseSignature reads `blkid -p -o export` output (KEY=value lines).
func ParseSignature(out []byte) Signature {
	var s Signature
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok {
			continue
		}
		switch k {
		case "TYPE":
			s.Type = v
		case "LABEL":
			s.Label = v
		case "UUID":
			s.UUID = v
		case "PTTYPE":
			s.PartitionTable = v
		}
	}
	return s
}

// Probe runs blkid's low-level probe (-p: the device itself, never its
// cache) on dev; exit status 2 means no signature at all.
func Probe(ctx context.Context, r execrun.Runner, dev string) (Signature, error) {
	res, err := r.Run(ctx, []string{"blkid", "-p", "-o", "export", dev})
	if execrun.ExitCode(err) == 2 {
		return Signature{}, nil
	}
	if err != nil {
		return Signature{}, fmt.Errorf("probe %s: %w", dev, err)
	}
	return ParseSignature(res.Stdout), nil
}

// byIDDir is where by-id names are resolved: ByIDDir, else /dev/disk/by-id.
func (m *Manager) byIDDir() string {
	if m.ByIDDir != "" {
		return m.ByIDDir
	}
	return api.DiskByIDDir
}

// ResolveDisk returns the kernel block device a /dev/disk/by-id/NAME path
// names: NAME is read as one symlink directly in ByIDDir (never a path
// through other links), a relative target is taken from /dev/disk/by-id as
// udev writes it, and the result must be a block device under /dev.
func (m *Manager) ResolveDisk(disk string) (string, error) {
	id, ok := api.DiskID(disk)
	if !ok {
		return "", fmt.Errorf("resolve disk %q: %w: not %s/NAME", disk, ErrUnsupported, api.DiskByIDDir)
	}
	dir, err := confined.Open(m.byIDDir())
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("resolve disk %s: %w: no %s", disk, ErrDiskMissing, m.byIDDir())
	}
	if err != nil {
		return "", fmt.Errorf("resolve disk %s: %w", disk, err)
	}
	defer dir.Close()
	target, err := dir.Readlink(id)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("resolve disk %s: %w", disk, ErrDiskMissing)
	}
	if errors.Is(err, syscall.EINVAL) {
		return "", fmt.Errorf("resolve disk %s: %w: not a symlink", disk, ErrUnsupported)
	}
	if err != nil {
		return "", fmt.Errorf("resolve disk %s: %w", disk, err)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(api.DiskByIDDir, target)
	}
	dev := filepath.Clean(target)
	if !strings.HasPrefix(dev, "/dev/") {
		return "", fmt.Errorf("resolve disk %s: %w: it links to %s, outside /dev", disk, ErrUnsupported, dev)
	}
	st, err := os.Stat(dev)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("resolve disk %s: %w: %s is gone", disk, ErrDiskMissing, dev)
	}
	if err != nil {
		return "", fmt.Errorf("resolve disk %s: %w", disk, err)
	}
	if st.Mode()&os.ModeDevice == 0 || st.Mode()&os.ModeCharDevice != 0 {
		return "", fmt.Errorf("resolve disk %s: %w: %s is not a block device", disk, ErrUnsupported, dev)
	}
	return dev, nil
}

// diskSize is the block device's size in bytes.
func diskSize(ctx context.Context, r execrun.Runner, dev string) (int64, error) {
	res, err := r.Run(ctx, []string{"blockdev", "--getsize64", dev})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dev, err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(res.Stdout)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dev, err)
	}
	return n, nil
}

// mountTargets lists where dev is mounted.
func mountTargets(ctx context.Context, r execrun.Runner, dev string) ([]string, error) {
	res, err := r.Run(ctx, []string{"findmnt", "-n", "-r", "-o", "TARGET", "--source", dev})
	if execrun.ExitCode(err) == 1 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list mounts of %s: %w", dev, err)
	}
	return strings.Fields(string(res.Stdout)), nil
}

// ensureDisk formats the op's disk only when blkid finds it empty, adopts
// it only when it holds kcore's filesystem for this volume (its label, and
// the UUID recorded when kcore made it), mounts it and grows the filesystem
// to the disk whenever the disk grew.
func (m *Manager) ensureDisk(ctx context.Context, op api.VolumeOp) (Outcome, error) {
	var out Outcome
	if op.Name == "" || (op.Role != "" && op.Role != RoleFilesystem) {
		return out, fmt.Errorf("ensure volume %q: %w: a disk needs a name and role filesystem", op.Name, ErrUnsupported)
	}
	fsType := op.FSType
	if fsType == "" {
		fsType = FSExt4
	}
	if fsType != FSExt4 && fsType != FSXFS {
		return out, fmt.Errorf("ensure volume %s: %w: filesystem %q", op.Name, ErrUnsupported, fsType)
	}
	dev, err := m.ResolveDisk(op.Device)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	records, err := m.loadRecords()
	if err != nil {
		return out, err
	}
	rec, known := records[op.Name]
	mnt := op.MountPath
	if mnt != "" && m.Resolve != nil {
		if mnt, err = m.Resolve(op.MountPath); err != nil {
			return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
		}
	}
	targets, err := mountTargets(ctx, m.Runner, dev)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	for _, t := range targets {
		if t != mnt {
			return out, fmt.Errorf("ensure volume %s: %w: %s (%s) is mounted at %s", op.Name, ErrDiskInUse, op.Device, dev, t)
		}
	}
	sig, err := Probe(ctx, m.Runner, dev)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	label := Label(op.Name)
	switch {
	case sig.Empty():
		if _, err := m.Runner.Run(ctx, mkfsArgv(fsType, label, dev)); err != nil {
			return out, fmt.Errorf("ensure volume %s: format %s: %w", op.Name, dev, err)
		}
		out.Formatted = true
		rec = Record{}
		if sig, err = Probe(ctx, m.Runner, dev); err != nil {
			return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
		}
	case sig.PartitionTable == "" && sig.Type == fsType && sig.Label == label:
		if known && rec.UUID != "" && rec.UUID != sig.UUID {
			return out, fmt.Errorf("ensure volume %s: %w: %s holds a filesystem labelled %s with UUID %s, but kcore made %s", op.Name, ErrForeignData, op.Device, label, sig.UUID, rec.UUID)
		}
	default:
		return out, fmt.Errorf("ensure volume %s: %w: %s (%s) holds %s; kcore formats only an empty disk (want %s labelled %s)", op.Name, ErrForeignData, op.Device, dev, sig, fsType, label)
	}
	size, err := diskSize(ctx, m.Runner, dev)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	rec = Record{Owned: true, Class: ClassDisk, Device: op.Device, Role: RoleFilesystem, UUID: sig.UUID, SizeBytes: size, FSBytes: rec.FSBytes}
	if out.Formatted {
		rec.FSBytes = size
	}
	if err := m.saveRecord(op.Name, rec); err != nil {
		return out, err
	}
	if mnt == "" {
		return out, nil
	}
	fs := Filesystem{Runner: m.Runner}
	if out.Mounted, err = fs.EnsureMounted(ctx, dev, mnt); err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	if rec.FSBytes < size {
		if err := fs.Grow(ctx, fsType, dev, mnt); err != nil {
			return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
		}
		out.FSGrown = true
		rec.FSBytes = size
	}
	return out, m.saveRecord(op.Name, rec)
}

// wipeDisk erases the signatures of a disk kcore formatted, after checking
// that the disk the name leads to still holds kcore's filesystem for this
// volume (its label and recorded UUID): a by-id name moved to another disk
// is refused (ErrNotOwned). The caller unmounts it first.
func (m *Manager) wipeDisk(ctx context.Context, name string, rec Record) error {
	dev, err := m.ResolveDisk(rec.Device)
	if err != nil {
		return err
	}
	sig, err := Probe(ctx, m.Runner, dev)
	if err != nil {
		return err
	}
	if sig.Label != Label(name) || (rec.UUID != "" && sig.UUID != rec.UUID) {
		return fmt.Errorf("%w: %s (%s) holds %s, not the filesystem kcore made", ErrNotOwned, rec.Device, dev, sig)
	}
	if _, err := m.Runner.Run(ctx, []string{"wipefs", "--all", dev}); err != nil {
		return fmt.Errorf("wipe %s: %w", dev, err)
	}
	return nil
}

// mkfsArgv is the command that makes fsType labelled label on dev; it
// never forces, so mkfs refuses a device holding a signature of its own.
func mkfsArgv(fsType, label, dev string) []string {
	if fsType == FSXFS {
		return []string{"mkfs.xfs", "-q", "-L", label, dev}
	}
	return []string{"mkfs.ext4", "-q", "-L", label, dev}
}
