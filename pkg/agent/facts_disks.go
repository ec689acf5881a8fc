package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/volume"
)

// MaxProbedDisks bounds how many disks one Collect probes with blkid; the
// rest are reported without their signature (Probed false).
const MaxProbedDisks = 64

// MaxMountLines bounds the mount table lines read.
const MaxMountLines = 100_000

// probeDisks fills in what each disk holds, so the plan can tell an empty
// disk from one in use or holding foreign data: blkid's low-level probe
// (filesystem, label, UUID, partition table), its partitions and holders
// from sysfs and where it is mounted.
func (c *Collector) probeDisks(ctx context.Context, disks []api.Disk) error {
	mounts, err := c.mounts()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for i := range disks {
		d := &disks[i]
		if d.Path == "" || i >= MaxProbedDisks {
			continue
		}
		sig, err := volume.Probe(ctx, c.Runner, d.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("disk %s: %w", d.ID, err))
			continue
		}
		d.Probed = true
		d.FSType, d.Label, d.UUID, d.PartitionTable = sig.Type, sig.Label, sig.UUID, sig.PartitionTable
		base := filepath.Base(d.Path)
		d.Partitions = c.partitions(base)
		d.Holders = dirNames(filepath.Join(c.sysDir(), "class/block", base, "holders"))
		d.MountPoints = mounts[d.Path]
	}
	if len(errs) > 0 {
		return fmt.Errorf("probe disks: %w", errors.Join(errs...))
	}
	return nil
}

// partitions lists the sysfs entries of the disk base that are partitions.
func (c *Collector) partitions(base string) []string {
	var out []string
	dir := filepath.Join(c.sysDir(), "class/block", base)
	for _, n := range dirNames(dir) {
		if !strings.HasPrefix(n, base) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, n, "partition")); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// dirNames lists a directory's entries; nil when it cannot be read.
func dirNames(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// mounts maps a mounted device to its mount points, read from
// <ProcDir>/self/mounts. A mount point under Root is given as the host path
// the agent renders (Root stripped), so the plan compares it with a
// volume's mountPath.
func (c *Collector) mounts() (map[string][]string, error) {
	f, err := os.Open(filepath.Join(c.procDir(), "self/mounts"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		if n == MaxMountLines {
			return out, fmt.Errorf("read mounts: more than %d lines", MaxMountLines)
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "/dev/") {
			continue
		}
		out[fields[0]] = append(out[fields[0]], c.hostPath(unescapeMount(fields[1])))
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read mounts: %w", err)
	}
	return out, nil
}

// hostPath strips Root from a path under it.
func (c *Collector) hostPath(p string) string {
	root := filepath.Clean(c.Root)
	if root == "/" || root == "." {
		return p
	}
	if p == root {
		return "/"
	}
	if rest, ok := strings.CutPrefix(p, root+"/"); ok {
		return "/" + rest
	}
	return p
}

// unescapeMount undoes the octal escapes (\040 for a space) of /proc/self/mounts.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return len(s) == 3
}
