package volume

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// lvm drives LVM: logical volumes for filesystems, a thin pool for role pool.
type lvm struct{ r execrun.Runner }

// lvsReport is `lvs --reportformat json` output.
type lvsReport struct {
	Report []struct {
		LV []struct {
			Name string `json:"lv_name"`
			VG   string `json:"vg_name"`
			Size string `json:"lv_size"`
		} `json:"lv"`
	} `json:"report"`
}

func (l lvm) size(ctx context.Context, op api.VolumeOp) (int64, bool, error) {
	res, err := l.r.Run(ctx, []string{"lvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "lv_name,vg_name,lv_size", op.Pool})
	if err != nil {
		return 0, false, fmt.Errorf("list logical volumes: %w", err)
	}
	var rep lvsReport
	if err := json.Unmarshal(res.Stdout, &rep); err != nil {
		return 0, false, fmt.Errorf("parse lvs: %w", err)
	}
	for _, r := range rep.Report {
		for _, lv := range r.LV {
			if lv.Name == op.Name && lv.VG == op.Pool {
				n, err := parseBytes(lv.Size)
				if err != nil {
					return 0, false, fmt.Errorf("parse lvs size %q: %w", lv.Size, err)
				}
				return n, true, nil
			}
		}
	}
	return 0, false, nil
}

func (l lvm) create(ctx context.Context, op api.VolumeOp) error {
	size := strconv.FormatInt(op.SizeBytes, 10) + "b"
	argv := []string{"lvcreate", "--yes", "-L", size, "-n", op.Name, op.Pool}
	if op.Role == RolePool {
		argv = []string{"lvcreate", "--yes", "--type", "thin-pool", "-L", size, "-n", op.Name, op.Pool}
	}
	_, err := l.r.Run(ctx, argv)
	return err
}

func (l lvm) grow(ctx context.Context, op api.VolumeOp) error {
	_, err := l.r.Run(ctx, []string{"lvextend", "-L", strconv.FormatInt(op.SizeBytes, 10) + "b", "/dev/" + op.Pool + "/" + op.Name})
	return err
}

func (l lvm) remove(ctx context.Context, op api.VolumeOp) error {
	_, err := l.r.Run(ctx, []string{"lvremove", "--yes", "/dev/" + op.Pool + "/" + op.Name})
	return err
}

// parseBytes reads an LVM size printed with --units b (with or without the B suffix).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "B")
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	return strconv.ParseInt(s, 10, 64)
}
