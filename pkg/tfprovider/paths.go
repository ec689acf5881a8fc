package tfprovider

import (
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"

	"kcore.dev/kcore/pkg/manifest"
)

// tfPath maps a field path of an issue (spec.localProvisioner.volumes[1].sizeBytes)
// to the attribute path in a resource (local_provisioner.volume[1].size_bytes).
func tfPath(fields []manifest.HCLField, fieldPath string) (path.Path, bool) {
	if fieldPath == "" {
		return path.Empty(), false
	}
	parts := strings.Split(fieldPath, ".")
	if len(parts) < 2 {
		return path.Empty(), false
	}
	// The top-level fields are named with their section (spec.cni).
	parts = append([]string{parts[0] + "." + parts[1]}, parts[2:]...)
	var at path.Path
	started := false
	for i := 0; i < len(parts); i++ {
		name, idx, _ := strings.Cut(parts[i], "[")
		m := [3]string{"", name, idx}
		var f *manifest.HCLField
		for j := range fields {
			if fields[j].Path == m[1] {
				f = &fields[j]
				break
			}
		}
		if f == nil {
			return path.Empty(), false
		}
		if !started {
			at, started = path.Root(f.Name), true
		} else {
			at = at.AtName(f.Name)
		}
		idxs, ok := indexes(m[2])
		if !ok {
			return path.Empty(), false
		}
		for _, idx := range idxs {
			at = at.AtListIndex(idx)
		}
		if f.Value == manifest.HCLStringMap && i+1 < len(parts) {
			return at.AtMapKey(strings.Join(parts[i+1:], ".")), true
		}
		fields = f.Fields
	}
	return at, started
}

// indexes parses the indexes after a name's first "[": "1][2]".
func indexes(s string) ([]int, bool) {
	if s == "" {
		return nil, true
	}
	if !strings.HasSuffix(s, "]") {
		return nil, false
	}
	var out []int
	for _, p := range strings.Split(strings.TrimSuffix(s, "]"), "][") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// pathOf is the path of a top-level attribute.
func pathOf(name string) path.Path { return path.Root(name) }
