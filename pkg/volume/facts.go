package volume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/execrun"
)

// vgsReport is `vgs --reportformat json` output.
type vgsReport struct {
	Report []struct {
		VG []struct {
			Name string `json:"vg_name"`
			Size string `json:"vg_size"`
			Free string `json:"vg_free"`
		} `json:"vg"`
	} `json:"report"`
}

// ParseVGs parses `vgs --reportformat json --units b` output.
func ParseVGs(data []byte) ([]api.StorageBackend, error) {
	var rep vgsReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("parse vgs: %w", err)
	}
	var out []api.StorageBackend
	for _, r := range rep.Report {
		for _, vg := range r.VG {
			size, err1 := parseBytes(vg.Size)
			free, err2 := parseBytes(vg.Free)
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("parse vgs %s: %w", vg.Name, err)
			}
			out = append(out, api.StorageBackend{Class: ClassLVM, Name: vg.Name, SizeBytes: size, FreeBytes: free})
		}
	}
	return out, nil
}

// ParseZpools parses `zpool list -Hp -o name,size,free` output.
func ParseZpools(data []byte) ([]api.StorageBackend, error) {
	var out []api.StorageBackend
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("parse zpool list: line %q", line)
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		free, err2 := strconv.ParseInt(f[2], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("parse zpool list %s: %w", f[0], err)
		}
		out = append(out, api.StorageBackend{Class: ClassZFS, Name: f[0], SizeBytes: size, FreeBytes: free})
	}
	return out, nil
}

// Backends lists the machine's LVM volume groups and ZFS pools. A missing
// tool means no backend of that class; other failures are returned along
// with whatever was found.
func Backends(ctx context.Context, r execrun.Runner) ([]api.StorageBackend, error) {
	var out []api.StorageBackend
	var errs []error
	probes := []struct {
		argv  []string
		parse func([]byte) ([]api.StorageBackend, error)
	}{
		{[]string{"vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o", "vg_name,vg_size,vg_free"}, ParseVGs},
		{[]string{"zpool", "list", "-Hp", "-o", "name,size,free"}, ParseZpools},
	}
	for _, p := range probes {
		res, err := r.Run(ctx, p.argv)
		if errors.Is(err, execrun.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found, err := p.parse(res.Stdout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, found...)
	}
	return out, errors.Join(errs...)
}
