package plan

import (
	"fmt"
	"slices"

	"kcore.dev/kcore/pkg/api"
)

// demand is space a volume needs from its node's storage backend.
type demand struct {
	path string // the volume's field path, e.g. spec.localProvisioner.volumes[1]
	vol  api.VolumeSpec
	from int64 // the stored size when the volume grows, 0 when it is new
}

func (d demand) need() int64 { return d.vol.SizeBytes - d.from }

// backendFor picks the backend a volume lives in: the named volume group or
// pool, or else the backend of the volume's class with the most free space.
// When there is none it returns an issue code and a message instead.
func backendFor(n *api.Node, v api.VolumeSpec) (api.StorageBackend, string, string) {
	if v.VolumeGroup != "" {
		i := slices.IndexFunc(n.Facts.Storage, func(s api.StorageBackend) bool { return s.Name == v.VolumeGroup })
		if i < 0 {
			return api.StorageBackend{}, CodeVolumeGroupMissing,
				fmt.Sprintf("%s has no volume group or pool named %s (it has %s)", n.Metadata.Name, v.VolumeGroup, listOrNone(backendNames(n)))
		}
		if s := n.Facts.Storage[i]; s.Class != v.StorageClass {
			return api.StorageBackend{}, CodeStorageClassMismatch,
				fmt.Sprintf("%s on %s is %s, but the volume declares storageClass %s", s.Name, n.Metadata.Name, s.Class, v.StorageClass)
		}
		return n.Facts.Storage[i], "", ""
	}
	var best *api.StorageBackend
	for i := range n.Facts.Storage {
		s := &n.Facts.Storage[i]
		if s.Class != v.StorageClass {
			continue
		}
		if best == nil || s.FreeBytes > best.FreeBytes || (s.FreeBytes == best.FreeBytes && s.Name < best.Name) {
			best = s
		}
	}
	if best == nil {
		return api.StorageBackend{}, CodeStorageClassMismatch,
			fmt.Sprintf("%s has no %s storage backend (it has %s)", n.Metadata.Name, v.StorageClass, listOrNone(backendNames(n)))
	}
	return *best, "", ""
}

func backendNames(n *api.Node) []string {
	out := make([]string, 0, len(n.Facts.Storage))
	for _, s := range n.Facts.Storage {
		out = append(out, s.Class+" "+s.Name)
	}
	return out
}

// checkStorage blocks volumes whose node has no backend of their class or not
// enough free space. Demands on one backend add up.
func (b *builder) checkStorage(demands []demand) {
	used := map[string]int64{}
	for _, d := range demands {
		n := b.env.nodes[d.vol.NodeID]
		if n == nil {
			continue
		}
		be, code, msg := backendFor(n, d.vol)
		if code != "" {
			path := d.path + ".storageClass"
			fix := fmt.Sprintf("set storageClass to the class of a backend %s has, or create a %s backend there first", d.vol.NodeID, d.vol.StorageClass)
			if code == CodeVolumeGroupMissing {
				path = d.path + ".volumeGroup"
				fix = "name an existing volume group or pool, or leave volumeGroup empty to use the largest backend of the class"
			}
			b.block(code, path, d.vol.NodeID, fix, "volume %s: %s", d.vol.Name, msg)
			continue
		}
		key := d.vol.NodeID + "/" + be.Name
		free := be.FreeBytes - used[key]
		used[key] += d.need()
		if d.need() <= free {
			continue
		}
		what := fmt.Sprintf("creating %s (%s) needs %s", d.vol.Name, humanBytes(d.vol.SizeBytes), humanBytes(d.need()))
		if d.from > 0 {
			what = fmt.Sprintf("growing %s from %s to %s needs %s more", d.vol.Name, humanBytes(d.from), humanBytes(d.vol.SizeBytes), humanBytes(d.need()))
		}
		left := "has"
		if used[key] > d.need() {
			left = "has left, after the other volumes in this plan,"
		}
		b.block(CodeStorageInsufficient, d.path+".sizeBytes", d.vol.NodeID,
			fmt.Sprintf("lower sizeBytes, free space in %s on %s, or extend it (vgextend / zpool add)", be.Name, d.vol.NodeID),
			"%s %s on %s %s %s free of %s; %s", be.Class, be.Name, d.vol.NodeID, left, humanBytes(max(free, 0)), humanBytes(be.SizeBytes), what)
	}
}

// checkVolumeChanges blocks shrinking a volume and changing what a volume is.
func (b *builder) checkVolumeChanges(changes []change) {
	const vols = "spec.localProvisioner.volumes[]."
	for _, c := range changes {
		switch c.key {
		case vols + "sizeBytes":
			if c.newSize < c.oldSize {
				b.block(CodeVolumeShrink, c.Path, c.node,
					fmt.Sprintf("keep sizeBytes at %d (%s) or more; for a smaller volume add one under a new name, move the data, then remove this one", c.oldSize, humanBytes(c.oldSize)),
					"volume %s on %s would shrink from %s to %s; volumes can grow, never shrink", c.volume, c.node, humanBytes(c.oldSize), humanBytes(c.newSize))
			}
		case vols + "storageClass", vols + "fsType", vols + "role", vols + "volumeGroup", vols + "disk":
			b.block(CodeVolumeImmutable, c.Path, c.node,
				"add a volume under a new name with the new settings, move the data, then remove this entry",
				"volume %s on %s cannot change %s from %q to %q in place: the volume would have to be recreated", c.volume, c.node, lastSegment(c.Path), c.Old, c.New)
		}
	}
}

func lastSegment(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}
