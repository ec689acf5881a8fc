package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
	"kcore.dev/kcore/pkg/render"
	"kcore.dev/kcore/pkg/volume"
)

// Collector measures a node's facts.
type Collector struct {
	// Root is the host root (disks are read from <Root>/dev/disk/by-id, the
	// fsync probe writes under <Root>/var/lib/etcd).
	Root string
	// Runner runs vgs, zpool, blkid (disks), arping and the version commands.
	Runner execrun.Runner
	// BinDir holds etcd, kubelet, keepalived, cilium and containerd (else $PATH).
	BinDir string
	// Labels are reported as they are (from --label k=v).
	Labels map[string]string
	// Log receives non-fatal probe failures.
	Log *slog.Logger
	// ProcDir is procfs (default /proc).
	ProcDir string
	// SysDir is sysfs (default <Root>/sys).
	SysDir string
	// FsyncSamples is the number of writes of the fsync probe (default 200).
	FsyncSamples int
	// Interfaces lists network interfaces; nil uses netlink (net.Interfaces as fallback).
	Interfaces func() ([]api.Interface, error)
}

// ARPTarget is an address the controller asked about, and the interface to
// ask on (empty: the interface whose subnet holds the address).
type ARPTarget struct {
	Address   string
	Interface string
}

// Probe selects the costly measurements of one Collect.
type Probe struct {
	// ARP lists the only addresses to check with arping (never a scan).
	ARP []ARPTarget
	// Fsync runs the etcd data directory fsync probe.
	Fsync bool
}

func (c *Collector) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// Collect measures the facts. It always returns what it could measure; the
// error joins the probes that failed.
func (c *Collector) Collect(ctx context.Context, p Probe) (api.NodeFacts, error) {
	var f api.NodeFacts
	var errs []error
	if r := filepath.Clean(c.Root); c.Root != "" && r != "/" {
		f.Root = r
	}
	if h, err := os.Hostname(); err == nil {
		f.Hostname = h
	} else {
		errs = append(errs, fmt.Errorf("hostname: %w", err))
	}
	list := c.Interfaces
	if list == nil {
		list = Interfaces
	}
	ifaces, err := list()
	if err != nil {
		errs = append(errs, err)
	}
	f.Interfaces = ifaces
	f.Addresses = addressesOf(ifaces)
	if f.Storage, err = volume.Backends(ctx, c.Runner); err != nil {
		errs = append(errs, fmt.Errorf("storage: %w", err))
	}
	if f.Disks, err = Disks(c.Root, c.sysDir()); err != nil {
		errs = append(errs, err)
	}
	if err := c.probeDisks(ctx, f.Disks); err != nil {
		errs = append(errs, err)
	}
	f.Versions = c.versions(ctx)
	if len(c.Labels) > 0 {
		f.Labels = maps.Clone(c.Labels)
	}
	f.ARPAnswered = c.arp(ctx, p.ARP, ifaces, f.Addresses)
	if p.Fsync {
		var err error
		if f.Fsync, err = FsyncProbe(c.Root, "/var/lib/etcd", c.FsyncSamples); err != nil {
			errs = append(errs, err)
		}
	}
	f.CiliumRunning = ProcessRunning(c.procDir(), "cilium-agent")
	err = errors.Join(errs...)
	if err != nil {
		c.log().Warn("facts incomplete", "err", err)
	}
	return f, err
}

func (c *Collector) procDir() string {
	if c.ProcDir != "" {
		return c.ProcDir
	}
	return "/proc"
}

func (c *Collector) sysDir() string {
	if c.SysDir != "" {
		return c.SysDir
	}
	return filepath.Join(c.Root, "sys")
}

// addressesOf lists the interfaces' IPs without prefix length, loopback excluded, sorted.
func addressesOf(ifaces []api.Interface) []string {
	var out []string
	for _, i := range ifaces {
		for _, a := range i.Addresses {
			ip, _, err := net.ParseCIDR(a)
			if err != nil || ip.IsLoopback() {
				continue
			}
			out = append(out, ip.String())
		}
	}
	sort.Strings(out)
	return out
}

// versionRE finds the first version number in a tool's --version output.
func versionRE() *regexp.Regexp {
	return regexp.MustCompile(`v?[0-9]+\.[0-9]+(\.[0-9]+)?([-+][0-9A-Za-z.-]+)?`)
}

// versions asks each Kubernetes-side binary and containerd for its version;
// absent ones are left out.
func (c *Collector) versions(ctx context.Context) map[string]string {
	probes := []struct {
		name string
		argv []string
	}{
		{"etcd", []string{"etcd", "--version"}},
		{"kubelet", []string{"kubelet", "--version"}},
		{"kube-apiserver", []string{"kube-apiserver", "--version"}},
		{"keepalived", []string{"keepalived", "--version"}},
		// Helm installs and upgrades Cilium (render's Cilium unit).
		{api.VersionHelm, []string{"helm", "version", "--template", "{{.Version}}"}},
		// The plan checks kubelet against it (plan.RuntimeSupport).
		{"containerd", []string{"containerd", "--version"}},
	}
	re := versionRE()
	out := map[string]string{}
	for _, p := range probes {
		argv := append([]string{}, p.argv...)
		if c.BinDir != "" {
			if _, err := os.Stat(filepath.Join(c.BinDir, argv[0])); err == nil {
				argv[0] = filepath.Join(c.BinDir, argv[0])
			}
		}
		res, err := c.Runner.Run(ctx, argv, execrun.WithTimeout(defaultProbeTimeout))
		if err != nil {
			if !errors.Is(err, execrun.ErrNotFound) {
				c.log().Debug("version probe", "binary", p.name, "err", err)
			}
			continue
		}
		if v := re.FindString(string(res.Stdout) + "\n" + string(res.Stderr)); v != "" {
			out[p.name] = v
		}
	}
	if v := ChartVersion(filepath.Join(c.Root, render.CiliumChartDir)); v != "" {
		out[api.VersionCiliumChart] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// MaxChartFile bounds how much of a chart's Chart.yaml ChartVersion reads.
const MaxChartFile = 64 << 10

// ChartVersion is the version a Helm chart directory's Chart.yaml gives,
// "" when there is none (no chart, no such line in its first MaxChartFile
// bytes).
func ChartVersion(dir string) string {
	f, err := os.Open(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, MaxChartFile))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "version:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// Disks lists <root>/dev/disk/by-id (whole disks, not partitions) with
// their kernel path and size from sysfs.
func Disks(root, sysDir string) ([]api.Disk, error) {
	dir := filepath.Join(root, "dev/disk/by-id")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list disks: %w", err)
	}
	var out []api.Disk
	for _, e := range entries {
		if strings.Contains(e.Name(), "-part") {
			continue
		}
		d := api.Disk{ID: e.Name()}
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join("/dev/disk/by-id", target)
			}
			d.Path = filepath.Clean(target)
			if data, err := os.ReadFile(filepath.Join(sysDir, "class/block", filepath.Base(d.Path), "size")); err == nil {
				if sectors, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil {
					d.SizeBytes = sectors * 512
				}
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// ProcessRunning reports whether a process whose comm is name exists.
func ProcessRunning(procDir, name string) bool {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if comm, err := os.ReadFile(filepath.Join(procDir, e.Name(), "comm")); err == nil && strings.TrimSpace(string(comm)) == name {
			return true
		}
	}
	return false
}
