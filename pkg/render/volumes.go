package render

import (
	"fmt"
	"path"

	"kcore.dev/kcore/manifests"
	"kcore.dev/kcore/pkg/api"
)

// volumes renders the node's VolumeOps: in shared mode a formatted, mounted
// LVM volume, ZFS zvol or whole raw disk per volume; in mode lvm one thin
// pool.
func (r *renderer) volumes(b *builder, m api.ClusterNode) error {
	lp := r.c.Spec.LocalProvisioner
	if !lp.Enabled {
		return nil
	}
	for _, v := range lp.Volumes {
		if v.NodeID != m.NodeID {
			continue
		}
		if v.StorageClass == api.StorageClassDisk {
			b.volumes = append(b.volumes, r.diskVolume(m.NodeID, v))
			continue
		}
		pool, err := r.storagePool(m.NodeID, v)
		if err != nil {
			return err
		}
		name := api.VolumeName(r.c.Metadata.Name, m.NodeID, v.Name)
		op := api.VolumeOp{
			Name:      name,
			Class:     v.StorageClass,
			Pool:      pool,
			SizeBytes: v.SizeBytes,
			Role:      v.Role,
		}
		if op.Class == "" {
			op.Class = api.StorageClassLVM
		}
		if op.Class == api.StorageClassZFS {
			op.Device = path.Join("/dev/zvol", pool, name)
		} else {
			op.Device = path.Join("/dev", pool, name)
		}
		if lp.Mode == api.ProvisionerModeLVM {
			op.Role = api.VolumeRolePool
		} else {
			op.FSType = v.FSType
			if op.FSType == "" {
				op.FSType = api.DefaultFSType
			}
			if op.Role == "" {
				op.Role = api.VolumeRoleFilesystem
			}
			op.MountPath = v.MountPath
			if op.MountPath == "" {
				op.MountPath = api.DefaultMountPath(r.c.Metadata.Name, v.Name)
			}
		}
		op.Reason = volumeReason(op)
		b.volumes = append(b.volumes, op)
	}
	return nil
}

// diskVolume is the VolumeOp of a whole raw disk: its size is the size the
// node reports for the disk (0 while it reports none; the plan blocks such a
// disk), so a disk that grew renders a grow.
func (r *renderer) diskVolume(node string, v api.VolumeSpec) api.VolumeOp {
	op := api.VolumeOp{
		Name:      api.VolumeName(r.c.Metadata.Name, node, v.Name),
		Class:     api.StorageClassDisk,
		Device:    v.Disk,
		FSType:    v.FSType,
		Role:      api.VolumeRoleFilesystem,
		MountPath: v.MountPath,
	}
	if op.FSType == "" {
		op.FSType = api.DefaultFSType
	}
	if op.MountPath == "" {
		op.MountPath = api.DefaultMountPath(r.c.Metadata.Name, v.Name)
	}
	if id, ok := api.DiskID(v.Disk); ok {
		if n := r.nodes[node]; n != nil {
			for _, d := range n.Facts.Disks {
				if d.ID == id {
					op.SizeBytes = d.SizeBytes
				}
			}
		}
	}
	op.Reason = volumeReason(op)
	return op
}

// storagePool is the volume's volumeGroup or, when empty, the node's first
// reported storage backend of the volume's class.
func (r *renderer) storagePool(node string, v api.VolumeSpec) (string, error) {
	if v.VolumeGroup != "" {
		return v.VolumeGroup, nil
	}
	class := v.StorageClass
	if class == "" {
		class = api.StorageClassLVM
	}
	if n := r.nodes[node]; n != nil {
		for _, s := range n.Facts.Storage {
			if s.Class == class {
				return s.Name, nil
			}
		}
	}
	if r.opts.UnreportedPool != "" {
		return r.opts.UnreportedPool, nil
	}
	return "", fmt.Errorf("render volume %s on %s: no volumeGroup and no %s backend reported: %w", v.Name, node, class, ErrNoStorageBackend)
}

// onMachine is where a node's path p is on its machine, as kubelet (and so a
// hostPath volume) sees it: p itself, but under the agent's root in the lab
// profile, where several nodes share one machine and each agent mounts its
// volumes under its own root.
func (r *renderer) onMachine(node, p string) string {
	if r.opts.Profile != ProfileLab {
		return p
	}
	if n := r.nodes[node]; n != nil && n.Facts.Root != "" {
		return path.Join(n.Facts.Root, p)
	}
	return p
}

// provisioner renders, on the bootstrap control plane, the local-path
// provisioner over every shared volume's mount path and the task that
// applies it. Mode lvm has no provisioner.
func (r *renderer) provisioner(b *builder) error {
	lp := r.c.Spec.LocalProvisioner
	if !lp.Enabled || lp.Mode == api.ProvisionerModeLVM || len(lp.Volumes) == 0 {
		return nil
	}
	var paths []manifests.NodePaths
	for _, n := range r.c.Spec.Members() {
		np := manifests.NodePaths{Node: n.NodeID}
		for _, v := range lp.Volumes {
			if v.NodeID != n.NodeID {
				continue
			}
			mp := v.MountPath
			if mp == "" {
				mp = api.DefaultMountPath(r.c.Metadata.Name, v.Name)
			}
			np.Paths = append(np.Paths, r.onMachine(n.NodeID, mp))
		}
		if len(np.Paths) > 0 {
			paths = append(paths, np)
		}
	}
	scName := lp.StorageClassName
	if scName == "" {
		scName = api.DefaultStorageClassName
	}
	yaml, err := manifests.LocalPathProvisioner(manifests.Provisioner{StorageClassName: scName, NodePaths: paths})
	if err != nil {
		return fmt.Errorf("render provisioner: %w", err)
	}
	b.file(r.l.Provisioner, modeConfig, yaml, false, "local-path provisioner "+manifests.LocalPathProvisionerImage+", StorageClass "+scName+", paths "+nodePathsString(paths))
	b.task(api.Task{Name: r.l.TaskProvisioner, Argv: r.kubectlApply(r.l.Provisioner), After: []string{r.l.UnitAPIServer}, Reason: "kubectl apply the local-path provisioner" + serverSideReason},
		r.l.Provisioner, r.l.AdminKubeconfig)
	return nil
}
