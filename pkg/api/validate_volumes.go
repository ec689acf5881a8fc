package api

import (
	"path"
	"strings"
)

func validateProvisioner(v *collector, s *ClusterSpec) {
	const lp = "spec.localProvisioner"
	l := s.LocalProvisioner
	if len(l.Volumes) > 0 && !l.Enabled {
		v.errorf(lp+".enabled", "must be true when volumes are listed")
	}
	if !l.Enabled && len(l.Volumes) == 0 {
		return
	}
	if l.Mode != ProvisionerModeShared && l.Mode != ProvisionerModeLVM {
		v.errorf(lp+".mode", "%q is not one of shared, lvm", l.Mode)
	}
	if !isDNSSubdomain(l.StorageClassName) {
		v.errorf(lp+".storageClassName", "%q is not a valid Kubernetes object name (lowercase letters, digits, '-' and '.')", l.StorageClassName)
	}
	members := map[string]bool{}
	for _, n := range s.Members() {
		members[n.NodeID] = true
	}
	seen := map[string]string{}
	disks := map[string]string{}
	for i, vol := range l.Volumes {
		p := index(lp+".volumes", i)
		checkName(v, p+".name", vol.Name)
		if vol.NodeID == "" {
			v.errorf(p+".nodeId", "required")
		} else if !members[vol.NodeID] {
			v.errorf(p+".nodeId", "%q is not a node of this cluster", vol.NodeID)
		}
		key := vol.NodeID + "/" + vol.Name
		if prev, ok := seen[key]; ok {
			v.errorf(p+".name", "volume %q is already declared on node %q at %s", vol.Name, vol.NodeID, prev)
		} else {
			seen[key] = p
		}
		switch vol.StorageClass {
		case StorageClassLVM, StorageClassZFS:
			if vol.SizeBytes <= 0 {
				v.errorf(p+".sizeBytes", "must be positive, got %d", vol.SizeBytes)
			}
			if vol.Disk != "" {
				v.errorf(p+".disk", "only valid with storageClass disk")
			}
		case StorageClassDisk:
			validateDiskVolume(v, p, vol, disks)
		default:
			v.errorf(p+".storageClass", "%q is not one of lvm, zfs, disk", vol.StorageClass)
		}
		if vol.FSType != FSTypeExt4 && vol.FSType != FSTypeXFS {
			v.errorf(p+".fsType", "%q is not one of ext4, xfs", vol.FSType)
		}
		if vol.Role != VolumeRoleFilesystem && vol.Role != VolumeRolePool {
			v.errorf(p+".role", "%q is not one of filesystem, pool", vol.Role)
		}
		if vol.VolumeGroup != "" && !isDNSSubdomain(strings.ToLower(vol.VolumeGroup)) {
			v.errorf(p+".volumeGroup", "%q is not a valid volume group or pool name", vol.VolumeGroup)
		}
		if l.Mode == ProvisionerModeLVM {
			validateLVMVolume(v, p, vol, l.Volumes[0])
			continue
		}
		if vol.Role == VolumeRolePool {
			v.errorf(p+".role", "pool is only valid with localProvisioner.mode lvm")
		}
		if vol.MountPath != "" && (!path.IsAbs(vol.MountPath) || path.Clean(vol.MountPath) != vol.MountPath || vol.MountPath == "/") {
			v.errorf(p+".mountPath", "%q must be a clean absolute path other than /", vol.MountPath)
		}
	}
}

// validateDiskVolume checks a volume of storageClass disk: a by-id name,
// no size (the disk is the volume), no volume group, one volume per disk.
func validateDiskVolume(v *collector, p string, vol VolumeSpec, disks map[string]string) {
	if vol.SizeBytes != 0 {
		v.errorf(p+".sizeBytes", "must be empty with storageClass disk: the volume is the whole disk, got %d", vol.SizeBytes)
	}
	if vol.VolumeGroup != "" {
		v.errorf(p+".volumeGroup", "must be empty with storageClass disk")
	}
	if _, ok := DiskID(vol.Disk); !ok {
		v.errorf(p+".disk", "%q is not a %s/NAME path (one name, no .. or /)", vol.Disk, DiskByIDDir)
		return
	}
	key := vol.NodeID + "/" + vol.Disk
	if prev, ok := disks[key]; ok {
		v.errorf(p+".disk", "%s on node %q is already the disk of %s", vol.Disk, vol.NodeID, prev)
		return
	}
	disks[key] = p
}

// DiskID returns the by-id name of a disk path /dev/disk/by-id/NAME; false
// when disk is not exactly that (NAME one clean path element).
func DiskID(disk string) (string, bool) {
	name, ok := strings.CutPrefix(disk, DiskByIDDir+"/")
	if !ok || name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || len(name) > maxDiskIDLen {
		return "", false
	}
	return name, true
}

// maxDiskIDLen is the longest by-id name accepted (a file name's limit).
const maxDiskIDLen = 255

// validateLVMVolume checks one volume of mode lvm against the first one: every
// listed node uses the same name, volume group, size and filesystem.
func validateLVMVolume(v *collector, p string, vol, first VolumeSpec) {
	if vol.Role != VolumeRolePool {
		v.errorf(p+".role", "must be pool when localProvisioner.mode is lvm")
	}
	if vol.StorageClass != StorageClassLVM && vol.StorageClass != "" {
		v.errorf(p+".storageClass", "must be lvm when localProvisioner.mode is lvm")
	}
	if vol.VolumeGroup == "" {
		v.errorf(p+".volumeGroup", "required when localProvisioner.mode is lvm")
	}
	if vol.MountPath != "" {
		v.errorf(p+".mountPath", "must be empty when localProvisioner.mode is lvm: a thin pool is not mounted")
	}
	const first0 = "spec.localProvisioner.volumes[0]"
	if vol.Name != first.Name {
		v.errorf(p+".name", "%q differs from %s.name %q: mode lvm needs the same name on every node", vol.Name, first0, first.Name)
	}
	if vol.VolumeGroup != first.VolumeGroup {
		v.errorf(p+".volumeGroup", "%q differs from %s.volumeGroup %q: mode lvm needs the same volume group on every node", vol.VolumeGroup, first0, first.VolumeGroup)
	}
	if vol.SizeBytes != first.SizeBytes {
		v.errorf(p+".sizeBytes", "%d differs from %s.sizeBytes %d: mode lvm needs the same size on every node", vol.SizeBytes, first0, first.SizeBytes)
	}
	if vol.FSType != first.FSType {
		v.errorf(p+".fsType", "%q differs from %s.fsType %q: mode lvm needs the same filesystem on every node", vol.FSType, first0, first.FSType)
	}
}
