package volume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// Storage classes and roles of a VolumeOp.
const (
	ClassLVM       = "lvm"
	ClassZFS       = "zfs"
	RoleFilesystem = "filesystem"
	RolePool       = "pool"
)

// ErrShrink refuses a size below the volume's current size.
var ErrShrink = errors.New("volume shrink refused")

// ErrNotOwned refuses to delete a volume kcore did not create.
var ErrNotOwned = errors.New("volume not created by kcore")

// ErrUnsupported is a class, role or filesystem this package does not handle.
var ErrUnsupported = errors.New("unsupported volume")

// ErrFilesystemMismatch refuses a device that holds another filesystem than requested.
var ErrFilesystemMismatch = errors.New("device holds another filesystem")

// shrinkTolerance absorbs allocation rounding (LVM extents, ZFS blocks) when
// there is no record of the size kcore asked for.
const shrinkTolerance = 64 << 20

// Outcome tells what Ensure did.
type Outcome struct {
	Created   bool
	Grown     bool
	Formatted bool
	Mounted   bool
	FSGrown   bool
}

// Changed reports whether Ensure changed anything.
func (o Outcome) Changed() bool {
	return o.Created || o.Grown || o.Formatted || o.Mounted || o.FSGrown
}

// backend is one storage class's volume commands.
type backend interface {
	// size returns the volume's size, or exists=false.
	size(ctx context.Context, op api.VolumeOp) (size int64, exists bool, err error)
	create(ctx context.Context, op api.VolumeOp) error
	grow(ctx context.Context, op api.VolumeOp) error
	remove(ctx context.Context, op api.VolumeOp) error
}

// Manager ensures volumes.
type Manager struct {
	// Runner runs lvs, lvcreate, zfs, blkid, mkfs, mount, ….
	Runner execrun.Runner
	// StateDir holds the ownership record (volumes.json), e.g. <root>/var/lib/kcore.
	StateDir string
	// Resolve maps a host mount path to the path to use (under the agent's
	// root, checked against its allow-list); nil uses the path as is.
	Resolve func(hostPath string) (string, error)
	// ByIDDir is where a disk's /dev/disk/by-id name is resolved; empty is
	// /dev/disk/by-id itself (the agent passes <root>/dev/disk/by-id).
	ByIDDir string
	// Log receives events.
	Log *slog.Logger
}

func (m *Manager) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

func (m *Manager) backend(class string) (backend, error) {
	switch class {
	case ClassLVM:
		return lvm{r: m.Runner}, nil
	case ClassZFS:
		return zfs{r: m.Runner}, nil
	}
	return nil, fmt.Errorf("%w: class %q", ErrUnsupported, class)
}

// Device is the op's block device: op.Device, else /dev/<vg>/<lv> or /dev/zvol/<pool>/<name>.
func Device(op api.VolumeOp) string {
	if op.Device != "" {
		return op.Device
	}
	if op.Class == ClassZFS {
		return filepath.Join("/dev/zvol", op.Pool, op.Name)
	}
	return filepath.Join("/dev", op.Pool, op.Name)
}

// Ensure creates or grows the volume, then (role filesystem) formats it when
// blank, mounts it and grows the filesystem after a size raise.
func (m *Manager) Ensure(ctx context.Context, op api.VolumeOp) (Outcome, error) {
	var out Outcome
	if op.Class == ClassDisk {
		return m.ensureDisk(ctx, op)
	}
	if op.Name == "" || op.Pool == "" || op.SizeBytes <= 0 {
		return out, fmt.Errorf("ensure volume %q: %w: name, pool and a positive size are required", op.Name, ErrUnsupported)
	}
	if op.Role == "" {
		op.Role = RoleFilesystem
	}
	if op.Class == ClassZFS {
		if op.Role == RolePool {
			return out, fmt.Errorf("ensure volume %s: %w: a zfs pool role", op.Name, ErrUnsupported)
		}
		op.SizeBytes = roundUp(op.SizeBytes, zfsBlock)
	}
	b, err := m.backend(op.Class)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	records, err := m.loadRecords()
	if err != nil {
		return out, err
	}
	rec, known := records[op.Name]
	size, exists, err := b.size(ctx, op)
	if err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	switch {
	case known && op.SizeBytes < rec.SizeBytes, !known && exists && size > op.SizeBytes+shrinkTolerance:
		return out, fmt.Errorf("ensure volume %s: %w: asked %d bytes, it has %d", op.Name, ErrShrink, op.SizeBytes, max(size, rec.SizeBytes))
	case !exists:
		if err := b.create(ctx, op); err != nil {
			return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
		}
		out.Created = true
		rec = Record{Owned: true, Class: op.Class, Pool: op.Pool, Device: Device(op), Role: op.Role}
	case size < op.SizeBytes:
		if err := b.grow(ctx, op); err != nil {
			return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
		}
		out.Grown = true
	}
	if !known && !out.Created {
		rec = Record{Class: op.Class, Pool: op.Pool, Device: Device(op), Role: op.Role, FSBytes: size}
	}
	rec.SizeBytes = max(rec.SizeBytes, op.SizeBytes)
	if out.Created {
		if _, err := m.Runner.Run(ctx, []string{"udevadm", "settle", "--timeout=30"}); err != nil && !errors.Is(err, execrun.ErrNotFound) {
			m.log().Warn("udevadm settle", "err", err)
		}
	}
	if err := m.saveRecord(op.Name, rec); err != nil {
		return out, err
	}
	if op.Role == RolePool {
		return out, nil
	}
	if err := m.ensureFilesystem(ctx, op, &rec, &out); err != nil {
		return out, fmt.Errorf("ensure volume %s: %w", op.Name, err)
	}
	return out, m.saveRecord(op.Name, rec)
}

// ensureFilesystem formats, mounts and grows op's filesystem.
func (m *Manager) ensureFilesystem(ctx context.Context, op api.VolumeOp, rec *Record, out *Outcome) error {
	fsType := op.FSType
	if fsType == "" {
		fsType = FSExt4
	}
	fs := Filesystem{Runner: m.Runner}
	dev := Device(op)
	formatted, err := fs.EnsureFormatted(ctx, dev, fsType, Label(op.Name))
	if err != nil {
		return err
	}
	if formatted {
		out.Formatted = true
		rec.FSBytes = op.SizeBytes
	}
	if op.MountPath == "" {
		return nil
	}
	mnt := op.MountPath
	if m.Resolve != nil {
		if mnt, err = m.Resolve(op.MountPath); err != nil {
			return err
		}
	}
	mounted, err := fs.EnsureMounted(ctx, dev, mnt)
	if err != nil {
		return err
	}
	out.Mounted = mounted
	if rec.FSBytes < op.SizeBytes {
		if err := fs.Grow(ctx, fsType, dev, mnt); err != nil {
			return err
		}
		out.FSGrown = true
		rec.FSBytes = op.SizeBytes
	}
	return nil
}

// Delete removes a volume kcore created (ErrNotOwned otherwise); a disk's
// filesystem signatures are wiped (wipefs), the disk itself stays. The
// caller unmounts it first.
func (m *Manager) Delete(ctx context.Context, op api.VolumeOp) error {
	records, err := m.loadRecords()
	if err != nil {
		return err
	}
	rec, ok := records[op.Name]
	if !ok || !rec.Owned {
		return fmt.Errorf("delete volume %s: %w", op.Name, ErrNotOwned)
	}
	if rec.Class == ClassDisk {
		if err := m.wipeDisk(ctx, op.Name, rec); err != nil {
			return fmt.Errorf("delete volume %s: %w", op.Name, err)
		}
		return m.dropRecord(op.Name)
	}
	op.Class, op.Pool = rec.Class, rec.Pool
	b, err := m.backend(op.Class)
	if err != nil {
		return fmt.Errorf("delete volume %s: %w", op.Name, err)
	}
	if err := b.remove(ctx, op); err != nil {
		return fmt.Errorf("delete volume %s: %w", op.Name, err)
	}
	return m.dropRecord(op.Name)
}

// Purge unmounts and deletes a volume kcore created; a volume it did not
// create is refused (ErrNotOwned) before any command runs.
func (m *Manager) Purge(ctx context.Context, op api.VolumeOp) error {
	records, err := m.loadRecords()
	if err != nil {
		return err
	}
	if rec, ok := records[op.Name]; !ok || !rec.Owned {
		return fmt.Errorf("purge volume %s: %w", op.Name, ErrNotOwned)
	}
	if op.MountPath != "" && op.Role != RolePool {
		mnt := op.MountPath
		if m.Resolve != nil {
			if mnt, err = m.Resolve(op.MountPath); err != nil {
				return fmt.Errorf("purge volume %s: %w", op.Name, err)
			}
		}
		if _, err := (Filesystem{Runner: m.Runner}).Unmount(ctx, mnt); err != nil {
			return fmt.Errorf("purge volume %s: %w", op.Name, err)
		}
	}
	return m.Delete(ctx, op)
}

func roundUp(n, to int64) int64 { return (n + to - 1) / to * to }
