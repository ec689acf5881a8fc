package agent

import (
	"context"
	"errors"
	"fmt"
	"net"

	"sort"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/confined"
	"kcore.dev/kcore/pkg/execrun"
)

const defaultProbeTimeout = 10 * time.Second

// Interfaces lists the network interfaces (loopback excluded) through
// netlink, falling back to the standard library when netlink fails.
func Interfaces() ([]api.Interface, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return stdInterfaces()
	}
	var out []api.Interface
	for _, l := range links {
		attrs := l.Attrs()
		if attrs.Flags&net.FlagLoopback != 0 {
			continue
		}
		it := api.Interface{Name: attrs.Name, MAC: attrs.HardwareAddr.String(), Up: attrs.Flags&net.FlagUp != 0}
		addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return stdInterfaces()
		}
		for _, a := range addrs {
			it.Addresses = append(it.Addresses, a.IPNet.String())
		}
		sort.Strings(it.Addresses)
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func stdInterfaces() ([]api.Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	var out []api.Interface
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			continue
		}
		it := api.Interface{Name: i.Name, MAC: i.HardwareAddr.String(), Up: i.Flags&net.FlagUp != 0}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			it.Addresses = append(it.Addresses, a.String())
		}
		sort.Strings(it.Addresses)
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// arp asks arping about each target (never any other address) and lists
// those answered from another host. Addresses held by this machine are
// skipped; a missing arping means no answers.
func (c *Collector) arp(ctx context.Context, targets []ARPTarget, ifaces []api.Interface, local []string) []string {
	own := map[string]bool{}
	for _, a := range local {
		own[a] = true
	}
	var answered []string
	for _, t := range targets {
		ip := net.ParseIP(t.Address)
		if ip == nil || ip.To4() == nil || own[ip.String()] {
			continue
		}
		iface := t.Interface
		if iface == "" {
			iface = interfaceFor(ip, ifaces)
		}
		if iface == "" {
			continue
		}
		_, err := c.Runner.Run(ctx, []string{"arping", "-c", "1", "-w", "1", "-I", iface, ip.String()}, execrun.WithTimeout(defaultProbeTimeout))
		if errors.Is(err, execrun.ErrNotFound) {
			return nil
		}
		if err == nil {
			answered = append(answered, ip.String())
		}
	}
	sort.Strings(answered)
	return answered
}

// interfaceFor names the interface with a subnet holding ip.
func interfaceFor(ip net.IP, ifaces []api.Interface) string {
	for _, i := range ifaces {
		for _, a := range i.Addresses {
			if _, n, err := net.ParseCIDR(a); err == nil && n.Contains(ip) {
				return i.Name
			}
		}
	}
	return ""
}

// FsyncProbe measures write+fdatasync latency in the host directory
// hostDir under root (created 0700 through the root's confined handle) like
// etcd's fio recipe (sequential 2300-byte appends, each followed by
// fdatasync), samples times.
func FsyncProbe(root, hostDir string, samples int) (*api.FsyncLatency, error) {
	if samples <= 0 {
		samples = 200
	}
	rel, err := Resolve(hostDir)
	if err != nil {
		return nil, fmt.Errorf("fsync probe: %w", err)
	}
	host, err := confined.Open(root)
	if err != nil {
		return nil, fmt.Errorf("fsync probe: %w", err)
	}
	defer host.Close()
	dir, err := host.Sub(rel, true, 0o700)
	if err != nil {
		return nil, fmt.Errorf("fsync probe: %w", err)
	}
	defer dir.Close()
	f, remove, err := dir.CreateTemp(".kcore-fsync-probe-")
	if err != nil {
		return nil, fmt.Errorf("fsync probe: %w", err)
	}
	defer remove()
	defer f.Close()
	buf := make([]byte, 2300)
	lat := make([]time.Duration, 0, samples)
	for range samples {
		start := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("fsync probe: %w", err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return nil, fmt.Errorf("fsync probe: %w", err)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(q float64) float64 {
		i := int(q * float64(len(lat)-1))
		return float64(lat[i].Microseconds()) / 1000
	}
	return &api.FsyncLatency{P50Millis: ms(0.50), P99Millis: ms(0.99)}, nil
}
