package volume

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// zfsBlock is the default volblocksize; zvol sizes are rounded up to it.
const zfsBlock = 16 << 10

// zfs drives ZFS zvols.
type zfs struct{ r execrun.Runner }

func (z zfs) dataset(op api.VolumeOp) string { return op.Pool + "/" + op.Name }

func (z zfs) size(ctx context.Context, op api.VolumeOp) (int64, bool, error) {
	res, err := z.r.Run(ctx, []string{"zfs", "list", "-Hp", "-o", "name,volsize", "-t", "volume", "-r", op.Pool})
	if err != nil {
		return 0, false, fmt.Errorf("list zvols: %w", err)
	}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 2 || f[0] != z.dataset(op) {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("parse zfs volsize %q: %w", f[1], err)
		}
		return n, true, nil
	}
	return 0, false, nil
}

func (z zfs) create(ctx context.Context, op api.VolumeOp) error {
	_, err := z.r.Run(ctx, []string{"zfs", "create", "-V", strconv.FormatInt(op.SizeBytes, 10), z.dataset(op)})
	return err
}

func (z zfs) grow(ctx context.Context, op api.VolumeOp) error {
	_, err := z.r.Run(ctx, []string{"zfs", "set", "volsize=" + strconv.FormatInt(op.SizeBytes, 10), z.dataset(op)})
	return err
}

func (z zfs) remove(ctx context.Context, op api.VolumeOp) error {
	_, err := z.r.Run(ctx, []string{"zfs", "destroy", z.dataset(op)})
	return err
}
