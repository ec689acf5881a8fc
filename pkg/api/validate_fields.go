package api

import (
	"net"
	"regexp"
	"strings"
)

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9_]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9_]*[a-z0-9])?)*$`)
)

// IsDNSLabel reports whether s is an RFC 1123 label of at most 63 characters.
func IsDNSLabel(s string) bool { return len(s) <= 63 && dnsLabel.MatchString(s) }

func isDNSSubdomain(s string) bool { return len(s) <= 253 && dnsSubdomain.MatchString(s) }

// checkName reports an error unless name is a DNS label; it returns whether it is.
func checkName(v *collector, path, name string) bool {
	if name == "" {
		v.errorf(path, "required")
		return false
	}
	if !IsDNSLabel(name) {
		v.errorf(path, "%q is not a DNS label (lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit)", name)
		return false
	}
	return true
}

// IsInterfaceName reports whether s is a valid Linux interface name: 1 to 15
// bytes, no '/', ':' or white space, not "." or "..".
func IsInterfaceName(s string) bool {
	if s == "" || len(s) > 15 || s == "." || s == ".." {
		return false
	}
	return !strings.ContainsAny(s, "/: \t\n\r\v\f")
}

func checkIfaceName(v *collector, path, name string) {
	if !IsInterfaceName(name) {
		v.errorf(path, "%q is not a valid Linux interface name (1 to 15 characters, no '/', ':' or spaces)", name)
	}
}

func parseIPv4(v *collector, path, s string) net.IP {
	if s == "" {
		v.errorf(path, "required")
		return nil
	}
	ip := net.ParseIP(s)
	if ip == nil || ip.To4() == nil || strings.Contains(s, ":") {
		v.errorf(path, "%q is not an IPv4 address", s)
		return nil
	}
	return ip.To4()
}

func parseCIDR(v *collector, path, s string) *net.IPNet {
	if s == "" {
		v.errorf(path, "required")
		return nil
	}
	ip, n, err := net.ParseCIDR(s)
	if err != nil || ip.To4() == nil {
		v.errorf(path, "%q is not an IPv4 CIDR such as 10.244.0.0/16", s)
		return nil
	}
	if !ip.Equal(n.IP) {
		v.errorf(path, "%q has host bits set; did you mean %s?", s, n)
		return nil
	}
	return n
}

// parsePoolCIDR parses a load-balancer pool. Cilium accepts a pool written
// with host bits set (the reference's own example is 192.168.40.220/29) and
// uses the whole network, so that is a warning naming the real range, not an
// error.
func parsePoolCIDR(v *collector, path, s string) *net.IPNet {
	ip, n, err := net.ParseCIDR(s)
	if err != nil || ip.To4() == nil {
		return parseCIDR(v, path, s)
	}
	if !ip.Equal(n.IP) {
		v.warnf(path, "%q has host bits set: the pool is all of %s", s, n)
	}
	return n
}

func overlaps(a, b *net.IPNet) bool { return a.Contains(b.IP) || b.Contains(a.IP) }

func joinQuoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = `"` + s + `"`
	}
	return strings.Join(q, ", ")
}
