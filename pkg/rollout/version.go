package rollout

import (
	"fmt"
	"strconv"
)

// version is a parsed major.minor.patch; patch is -1 when not given.
type version struct {
	major, minor, patch int
}

// parseVersion reads the first major.minor[.patch] in s, so "v1.37.2",
// "1.37.2", "Kubernetes v1.37.2" and "3.7.3+kcore" all parse. Suffixes after
// the numbers are ignored.
func parseVersion(s string) (version, bool) {
	i := 0
	for i < len(s) && (s[i] < '0' || s[i] > '9') {
		i++
	}
	var nums []int
	for len(nums) < 3 && i < len(s) {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			break
		}
		n, err := strconv.Atoi(s[i:j])
		if err != nil {
			return version{}, false
		}
		nums = append(nums, n)
		if j >= len(s) || s[j] != '.' {
			break
		}
		i = j + 1
	}
	switch len(nums) {
	case 2:
		return version{nums[0], nums[1], -1}, true
	case 3:
		return version{nums[0], nums[1], nums[2]}, true
	}
	return version{}, false
}

// minorKey orders versions by major and minor: 1.37 is 1037.
func (v version) minorKey() int { return v.major*1000 + v.minor }

// minorsAbove is how many minor versions v is above o (negative when below);
// a different major counts as far apart.
func (v version) minorsAbove(o version) int {
	if v.major != o.major {
		return (v.major - o.major) * 1000
	}
	return v.minor - o.minor
}

// compare orders by major, minor and patch; an unknown patch sorts first.
func (v version) compare(o version) int {
	for _, d := range [3]int{v.major - o.major, v.minor - o.minor, v.patch - o.patch} {
		if d != 0 {
			return d
		}
	}
	return 0
}

func (v version) String() string {
	if v.patch < 0 {
		return fmt.Sprintf("%d.%d", v.major, v.minor)
	}
	return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
}

// minorString is "1.37".
func (v version) minorString() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// etcdFor maps a Kubernetes minor to the etcd minor its release ships and
// tests with (kubernetes/kubernetes cluster/images/etcd and the release
// notes). ok is false for a minor the table does not know.
func etcdFor(k version) (version, bool) {
	if k.major != 1 {
		return version{}, false
	}
	switch {
	case k.minor >= 31 && k.minor <= 33:
		return version{3, 5, -1}, true
	case k.minor >= 34 && k.minor <= 36:
		return version{3, 6, -1}, true
	case k.minor == 37:
		return version{3, 7, -1}, true
	}
	return version{}, false
}
