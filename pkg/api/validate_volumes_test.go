package api

import (
	"strings"
	"testing"
)

func TestVolumesValidate(t *testing.T) {
	vol := VolumeSpec{Name: "data", NodeID: "node-2", StorageClass: "lvm", SizeBytes: 1 << 30}
	pool := VolumeSpec{Name: "kdata", NodeID: "node-1", StorageClass: "lvm", SizeBytes: 50 << 30, VolumeGroup: "vg_kcore"}
	with := func(v VolumeSpec, f func(*VolumeSpec)) VolumeSpec { f(&v); return v }
	disk := VolumeSpec{Name: "disk", NodeID: "node-1", StorageClass: "disk", Disk: "/dev/disk/by-id/ata-SAMSUNG_1", FSType: "xfs"}
	tests := []struct {
		name      string
		mode      string
		enabled   bool
		class     string
		vols      []VolumeSpec
		want      []string
		fragments []string
	}{
		{name: "enabled without volumes", enabled: true},
		{name: "shared volumes", enabled: true, vols: []VolumeSpec{vol, with(vol, func(v *VolumeSpec) { v.NodeID = "node-1"; v.StorageClass = "zfs" })}},
		{name: "volumes need enabled", vols: []VolumeSpec{vol},
			want: []string{"error spec.localProvisioner.enabled"}, fragments: []string{"must be true"}},
		{name: "bad mode", enabled: true, mode: "thin", vols: []VolumeSpec{vol},
			want: []string{"error spec.localProvisioner.mode"}, fragments: []string{"shared, lvm"}},
		{name: "bad storageClassName", enabled: true, class: "Local_Path",
			want: []string{"error spec.localProvisioner.storageClassName"}, fragments: []string{"Kubernetes object name"}},
		{name: "bad volume name and unknown node", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.Name = "Data"; v.NodeID = "node-9" })},
			want: []string{"error spec.localProvisioner.volumes[0].name", "error spec.localProvisioner.volumes[0].nodeId"}, fragments: []string{"DNS label", "not a node of this cluster"}},
		{name: "node required", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.NodeID = "" })},
			want: []string{"error spec.localProvisioner.volumes[0].nodeId"}, fragments: []string{"required"}},
		{name: "storage class", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.StorageClass = "ceph" })},
			want: []string{"error spec.localProvisioner.volumes[0].storageClass"}, fragments: []string{"lvm, zfs, disk"}},
		{name: "disk volume", enabled: true, vols: []VolumeSpec{disk, with(disk, func(v *VolumeSpec) { v.NodeID = "node-2" })}},
		{name: "disk: a by-id name", enabled: true, vols: []VolumeSpec{
			with(disk, func(v *VolumeSpec) { v.Disk = "/dev/sda" }),
			with(disk, func(v *VolumeSpec) { v.Name = "b"; v.Disk = "/dev/disk/by-id/../../sda" }),
			with(disk, func(v *VolumeSpec) { v.Name = "c"; v.Disk = "" }),
			with(disk, func(v *VolumeSpec) { v.Name = "d"; v.Disk = "/dev/disk/by-id/" + strings.Repeat("x", 256) }),
		}, want: []string{
			"error spec.localProvisioner.volumes[0].disk", "error spec.localProvisioner.volumes[1].disk",
			"error spec.localProvisioner.volumes[2].disk", "error spec.localProvisioner.volumes[3].disk",
		}, fragments: []string{"/dev/disk/by-id/NAME"}},
		{name: "disk: longest name", enabled: true, vols: []VolumeSpec{with(disk, func(v *VolumeSpec) { v.Disk = "/dev/disk/by-id/" + strings.Repeat("x", 255) })}},
		{name: "disk: no size, no volume group", enabled: true, vols: []VolumeSpec{with(disk, func(v *VolumeSpec) { v.SizeBytes = 1 << 30; v.VolumeGroup = "vg" })},
			want: []string{"error spec.localProvisioner.volumes[0].sizeBytes", "error spec.localProvisioner.volumes[0].volumeGroup"}, fragments: []string{"whole disk"}},
		{name: "disk: one volume per disk", enabled: true, vols: []VolumeSpec{disk, with(disk, func(v *VolumeSpec) { v.Name = "other" })},
			want: []string{"error spec.localProvisioner.volumes[1].disk"}, fragments: []string{"already the disk of spec.localProvisioner.volumes[0]"}},
		{name: "disk only with class disk", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.Disk = disk.Disk })},
			want: []string{"error spec.localProvisioner.volumes[0].disk"}, fragments: []string{"only valid with storageClass disk"}},
		{name: "size must be positive", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.SizeBytes = 0 }), with(vol, func(v *VolumeSpec) { v.Name = "b"; v.SizeBytes = -5 })},
			want: []string{"error spec.localProvisioner.volumes[0].sizeBytes", "error spec.localProvisioner.volumes[1].sizeBytes"}, fragments: []string{"got 0", "got -5"}},
		{name: "fsType", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.FSType = "btrfs" })},
			want: []string{"error spec.localProvisioner.volumes[0].fsType"}, fragments: []string{"ext4, xfs"}},
		{name: "role", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.Role = "block" })},
			want: []string{"error spec.localProvisioner.volumes[0].role"}, fragments: []string{"filesystem, pool"}},
		{name: "pool role needs lvm mode", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.Role = "pool" })},
			want: []string{"error spec.localProvisioner.volumes[0].role"}, fragments: []string{"only valid with localProvisioner.mode lvm"}},
		{name: "mount path must be clean and absolute", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.MountPath = "mnt/../x" })},
			want: []string{"error spec.localProvisioner.volumes[0].mountPath"}, fragments: []string{"clean absolute path"}},
		{name: "bad volume group", enabled: true, vols: []VolumeSpec{with(vol, func(v *VolumeSpec) { v.VolumeGroup = "vg kcore" })},
			want: []string{"error spec.localProvisioner.volumes[0].volumeGroup"}, fragments: []string{"volume group"}},
		{name: "duplicate volume on a node", enabled: true, vols: []VolumeSpec{vol, with(vol, func(v *VolumeSpec) { v.StorageClass = "zfs" })},
			want: []string{"error spec.localProvisioner.volumes[1].name"}, fragments: []string{`already declared on node "node-2" at spec.localProvisioner.volumes[0]`}},
		{name: "same name on two nodes is fine", enabled: true, vols: []VolumeSpec{vol, with(vol, func(v *VolumeSpec) { v.NodeID = "node-1" })}},
		{name: "lvm mode", enabled: true, mode: "lvm", vols: []VolumeSpec{pool, with(pool, func(v *VolumeSpec) { v.NodeID = "node-2" })}},
		{name: "lvm mode: role pool", enabled: true, mode: "lvm", vols: []VolumeSpec{with(pool, func(v *VolumeSpec) { v.Role = "filesystem" })},
			want: []string{"error spec.localProvisioner.volumes[0].role"}, fragments: []string{"must be pool"}},
		{name: "lvm mode: volume group required", enabled: true, mode: "lvm", vols: []VolumeSpec{with(pool, func(v *VolumeSpec) { v.VolumeGroup = "" })},
			want: []string{"error spec.localProvisioner.volumes[0].volumeGroup"}, fragments: []string{"required when localProvisioner.mode is lvm"}},
		{name: "lvm mode: mount path empty", enabled: true, mode: "lvm", vols: []VolumeSpec{with(pool, func(v *VolumeSpec) { v.MountPath = "/mnt/x" })},
			want: []string{"error spec.localProvisioner.volumes[0].mountPath"}, fragments: []string{"must be empty"}},
		{name: "lvm mode: storage class lvm", enabled: true, mode: "lvm", vols: []VolumeSpec{with(pool, func(v *VolumeSpec) { v.StorageClass = "zfs" })},
			want: []string{"error spec.localProvisioner.volumes[0].storageClass"}, fragments: []string{"must be lvm"}},
		{name: "lvm mode: every node the same", enabled: true, mode: "lvm", vols: []VolumeSpec{pool, {Name: "other", NodeID: "node-2", StorageClass: "lvm", SizeBytes: 1 << 30, FSType: "xfs", VolumeGroup: "vg_b"}},
			want: []string{
				"error spec.localProvisioner.volumes[1].name", "error spec.localProvisioner.volumes[1].volumeGroup",
				"error spec.localProvisioner.volumes[1].sizeBytes", "error spec.localProvisioner.volumes[1].fsType",
			}, fragments: []string{"same name", "same volume group", "same size", "same filesystem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := baseCluster()
			c.Spec.LocalProvisioner = LocalProvisionerSpec{Enabled: tt.enabled, Mode: tt.mode, StorageClassName: tt.class, Volumes: tt.vols}
			c.Default()
			checkIssues(t, c.Validate(), tt.want, tt.fragments)
		})
	}
}
