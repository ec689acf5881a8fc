package plan

import (
	"fmt"
	"slices"
	"strings"

	"kcore.dev/kcore/pkg/api"
)

// checkDisks blocks a whole-disk volume, new since before, whose disk its
// node does not report, is in use by something else (mounted elsewhere,
// partitioned, held by device-mapper or md), or holds data kcore did not
// write for this volume: kcore formats a disk only while the node reports
// it empty, and adopts one only when it carries this volume's filesystem.
func (b *builder) checkDisks(c, before *api.KubernetesCluster) {
	for i, v := range c.Spec.LocalProvisioner.Volumes {
		if v.StorageClass != api.StorageClassDisk {
			continue
		}
		if before != nil {
			if o, ok := findVolume(before, v.NodeID, v.Name); ok && o.StorageClass == v.StorageClass && o.Disk == v.Disk {
				continue
			}
		}
		n := b.env.nodes[v.NodeID]
		id, ok := api.DiskID(v.Disk)
		if n == nil || !ok {
			continue // an unregistered node and a malformed name have their own issues
		}
		path := fmt.Sprintf("spec.localProvisioner.volumes[%d].disk", i)
		j := slices.IndexFunc(n.Facts.Disks, func(d api.Disk) bool { return d.ID == id })
		if j < 0 {
			b.block(CodeDiskMissing, path, v.NodeID,
				fmt.Sprintf("attach the disk, or name one %s lists (kctl node get %s)", v.NodeID, v.NodeID),
				"volume %s: %s reports no disk %s (it has %s)", v.Name, v.NodeID, v.Disk, listOrNone(diskIDs(n)))
			continue
		}
		d := n.Facts.Disks[j]
		mountPath := v.MountPath
		if mountPath == "" {
			mountPath = api.DefaultMountPath(c.Metadata.Name, v.Name)
		}
		if use := diskUse(d, mountPath); use != "" {
			b.block(CodeDiskInUse, path, v.NodeID,
				"unmount it and remove what is built on it, or name a disk nothing uses",
				"volume %s: %s on %s is in use: %s", v.Name, v.Disk, v.NodeID, use)
			continue
		}
		if held := diskData(d, v.FSType, api.VolumeLabel(api.VolumeName(c.Metadata.Name, v.NodeID, v.Name))); held != "" {
			b.block(CodeDiskForeignData, path, v.NodeID,
				fmt.Sprintf("if its data is not needed, erase it on %s yourself (wipefs --all %s), or name an empty disk", v.NodeID, v.Disk),
				"volume %s: %s on %s holds %s; kcore formats only an empty disk", v.Name, v.Disk, v.NodeID, held)
		}
	}
}

// diskUse says what uses d other than the volume's own mount; "" when nothing.
func diskUse(d api.Disk, mountPath string) string {
	var use []string
	for _, m := range d.MountPoints {
		if m != mountPath {
			use = append(use, "mounted at "+m)
		}
	}
	if len(d.Partitions) > 0 {
		use = append(use, "partitions "+strings.Join(d.Partitions, ", "))
	}
	if len(d.Holders) > 0 {
		use = append(use, "held by "+strings.Join(d.Holders, ", "))
	}
	return strings.Join(use, "; ")
}

// diskData describes what d holds when that is neither nothing nor this
// volume's own filesystem (fsType labelled label); "" when kcore may use it.
func diskData(d api.Disk, fsType, label string) string {
	if fsType == "" {
		fsType = api.DefaultFSType
	}
	switch {
	case !d.Probed:
		return "data the node could not probe (blkid did not run)"
	case d.PartitionTable != "":
		return "a " + d.PartitionTable + " partition table"
	case d.FSType == "":
		return ""
	case d.FSType == fsType && d.Label == label:
		return ""
	case d.Label != "":
		return fmt.Sprintf("%s %s filesystem labelled %q", article(d.FSType), d.FSType, d.Label)
	}
	return article(d.FSType) + " " + d.FSType + " signature"
}

func diskIDs(n *api.Node) []string {
	out := make([]string, 0, len(n.Facts.Disks))
	for _, d := range n.Facts.Disks {
		out = append(out, d.ID)
	}
	return out
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiouAEIOU", rune(word[0])) {
		return "an"
	}
	return "a"
}
